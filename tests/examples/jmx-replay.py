#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""jmx-replay.py - runs the HTTP samplers of a JMeter plan once each, in document order,
against a real stsd, without JMeter (which is not in Debian): ${var} and the functions the
examples use (__P, reading -G/-J properties as JMeter does, __machineName, __threadNum, __threadName as JMeter names a thread:
"GROUP 1-1"; __jexl3 left alone) are substituted, each thread group starts from the plan's
variables, Response Assertions (substring, regex contains) are checked and Regex
Extractors (body or headers) set variables. Controllers run their children once; an If
Controller whose condition is ${__jexl3("a" == "b")} (or !=) once substituted runs its
children when true, any other condition is only reported; Flow Control Actions are left
alone.

Engines: --engines N replays the plan N times one after the other, as N engines of a
distributed run that start late one after another (__machineName replay-1, replay-2...);
--once-only CMD then asserts that the samplers of command CMD (INITFILE, RESET) were sent
by exactly one engine, the first: a plan that loads its lists through ONCE must not
reload them when a later engine joins.

Usage: tests/examples/jmx-replay.py PLAN BASE_URL [-Gname=value]... [-Jname=value]...
           [--skip PARAM]... [--group TEXT]... [--machine NAME]
           [--engines N [--between PATH?QUERY] [--once-only CMD]...]
  -Gname=value, -Jname=value: a property, what ${__P(name,default)} answers (JMeter's -G
      sends it to every engine, -J sets it on one; a replay makes no difference)
  --skip PARAM: leave out the samplers that send PARAM (a parameter the server lacks yet)
  --group TEXT: run only the thread groups whose name contains one of the TEXTs
  --machine NAME: ${__machineName} (replay by default)
  --engines N: replay the plan as N engines in turn (replay-1 ... replay-N)
  --between PATH?QUERY: one GET between two engines, as the test under way (a lease taken)
  --once-only CMD: fail unless CMD was sent by the first engine and no other
Prints one line per sampler; exits 1 if any sampler or --once-only check fails.
"""
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

PROPS = {}                              # -G and -J properties
FUNCS = [
    (re.compile(r"\$\{__P\(([^,)]*),([^)]*)\)\}"), lambda m: PROPS.get(m.group(1), m.group(2))),
]


def subst(text, env):
    text = text or ""
    for rx, fn in FUNCS:
        text = rx.sub(fn, text)
    return re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), m.group(0)), text)


def props(el):
    return {p.get("name"): (p.text or "") for p in el if p.tag in ("stringProp", "intProp", "boolProp")}


def plan_vars(root, env):
    for ep in root.iter("elementProp"):
        if ep.get("name") == "TestPlan.user_defined_variables":
            for a in ep.iter("elementProp"):
                p = props(a)
                if "Argument.name" in p:
                    env[p["Argument.name"]] = subst(p.get("Argument.value", ""), env)
    return env


def pairs(tree):
    kids = list(tree)
    return list(zip(kids[::2], kids[1::2]))


def run(base, sampler, children, env, skip, out):
    p = props(sampler)
    args = []
    for a in sampler.iter("elementProp"):
        ap = props(a)
        if "Argument.name" in ap:
            args.append((ap["Argument.name"], subst(ap.get("Argument.value", ""), env)))
    name = subst(sampler.get("testname"), env)
    if any(k in skip for k, _ in args):
        out.append(("skip", name, None))
        print(f"  skip  {name} (sends {', '.join(k for k, _ in args if k in skip)})")
        return
    path = subst(p["HTTPSampler.path"], env)
    url = base.rstrip("/") + path + "?" + urllib.parse.urlencode(args)
    try:
        wait = int(p.get("HTTPSampler.response_timeout") or 20000) / 1000
        with urllib.request.urlopen(url, timeout=wait) as r:
            status, body, heads = r.status, r.read().decode("utf-8", "replace"), r.headers
    except urllib.error.HTTPError as e:
        status, body, heads = e.code, e.read().decode("utf-8", "replace"), e.headers
    headers = f"HTTP/1.1 {status}\n" + "".join(f"{k}: {v}\n" for k, v in heads.items())
    problems = []
    for el, _ in pairs(children):
        c = props(el)
        if el.tag == "ResponseAssertion":
            pats = [s.text or "" for s in el.iter("stringProp") if s.get("name", "").isdigit()]
            kind = int(c.get("Assertion.test_type", "16"))
            for pat in pats:
                hit = pat in body if kind & 16 else re.search(pat, body) is not None
                if not hit:
                    problems.append(f"assertion {el.get('testname')!r}: {pat!r} not in the answer")
        elif el.tag == "RegexExtractor":
            text = headers if c.get("RegexExtractor.useHeaders") == "true" else body
            m = re.search(c["RegexExtractor.regex"], text, re.S)
            ref = c["RegexExtractor.refname"]
            if m:
                env[ref] = re.sub(r"\$(\d+)\$", lambda g: m.group(int(g.group(1))) or "",
                                  c.get("RegexExtractor.template", "$1$"))
                for i, g in enumerate(m.groups(), 1):
                    env[f"{ref}_g{i}"] = g or ""
            else:
                env[ref] = c.get("RegexExtractor.default", "")
    short = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)).strip()[:70]
    if problems:
        out.append(("fail", name, path))
        print(f"  FAIL  {name}: {'; '.join(problems)} (answer: {short})")
    else:
        out.append(("ok", name, path))
        print(f"  ok    {name} -> {short}")


JEXL_EQ = re.compile(r'^\$\{__jexl3\("([^"]*)"\s*(==|!=)\s*"([^"]*)"\)\}$')


def walk(base, tree, env, skip, out, groups=None):
    n = 0
    for el, sub in pairs(tree):
        if el.tag == "HTTPSamplerProxy":
            run(base, el, sub, env, skip, out)
        elif el.tag in ("ThreadGroup", "SetupThreadGroup", "PostThreadGroup"):
            n += 1
            name = el.get("testname") or ""
            if groups and not any(g in name for g in groups):
                continue
            print(f"  -- {name}")
            genv = dict(env, __threadNum="1", __threadName=f"{name} {n}-1")
            walk(base, sub, genv, skip, out)
        elif el.tag == "IfController":
            cond = subst(props(el).get("IfController.condition"), env)
            m = JEXL_EQ.match(cond.strip())
            if m and (m.group(1) == m.group(3)) == (m.group(2) == "=="):
                print(f"  -- if {cond}: true, children run")
                walk(base, sub, env, skip, out)
            else:
                print(f"  -- if {cond}: {'false, ' if m else ''}children not run")
        elif el.tag.endswith("Controller"):
            walk(base, sub, env, skip, out)


def option(args, name):
    """Every value of option NAME, taken out of args."""
    values = []
    while name in args:
        i = args.index(name)
        values.append(args[i + 1])
        del args[i:i + 2]
    return values


def main():
    args = []
    for a in sys.argv[1:]:
        if a[:2] in ("-G", "-J") and "=" in a:
            name, value = a[2:].split("=", 1)
            PROPS[name] = value
        else:
            args.append(a)
    groups = option(args, "--group")
    skip = set(option(args, "--skip"))
    machine = (option(args, "--machine") or ["replay"])[-1]
    engines = int((option(args, "--engines") or ["0"])[-1])
    between = option(args, "--between")
    once_only = option(args, "--once-only")
    plan, base = args
    root = ET.parse(plan).getroot()
    out = []
    sent = []                           # per engine: the commands it sent
    for e in range(max(engines, 1)):
        if engines:
            machine = f"replay-{e + 1}"
            print(f"engine {machine}")
        env = plan_vars(root, {"__machineName": machine})
        mine = []
        top = root.find("hashTree")
        for _, sub in pairs(top):          # the TestPlan and its tree
            walk(base, sub, env, skip, mine, groups)
        out += mine
        sent.append({p.rsplit("/", 1)[-1] for k, _, p in mine if p})
        if e + 1 < engines:
            for q in between:
                with urllib.request.urlopen(base.rstrip("/") + q, timeout=20) as r:
                    short = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", r.read().decode())).strip()
                    print(f"  --    between engines: {q} -> {short[:60]}")
    fails = sum(1 for k, _, _ in out if k == "fail")
    oks = sum(1 for k, _, _ in out if k == "ok")
    skips = len(out) - oks - fails
    for cmd in once_only:
        by = [f"replay-{i + 1}" for i, s in enumerate(sent) if cmd in s]
        if by == ["replay-1"]:
            print(f"  ok    {cmd} sent by replay-1 only, of {len(sent)} engines")
        else:
            fails += 1
            print(f"  FAIL  {cmd} sent by {', '.join(by) or 'no engine'} (want replay-1 only)")
    print(f"replay: {oks} samplers ok, {fails} failed, {skips} skipped")
    sys.exit(1 if fails or not oks else 0)


if __name__ == "__main__":
    main()
