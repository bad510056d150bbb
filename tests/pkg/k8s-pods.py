# SPDX-License-Identifier: Apache-2.0
"""k8s-pods.py - deploy/k8s/stsd.yaml checked without a cluster, and its StatefulSet's pods
written out as `podman kube play` takes them (tests/pkg/test-image-cluster.sh).

Usage: python3 tests/pkg/k8s-pods.py MANIFEST PREFIX HTTP_PORTS OUTDIR
Checks the manifest (each failed check one "FAIL ..." line, each passed one "ok ..." line),
then writes OUTDIR/N.yaml for each ordinal N: the ConfigMap, the pod's claim of the
volumeClaimTemplate and the pod, as the StatefulSet controller would make pod N (named
PREFIX-stsd-N, so that runs do not collide; the ConfigMap PREFIX-stsd-cluster), with the
HTTP port published on 127.0.0.1 at the Nth of HTTP_PORTS (comma-separated). Exit status 1 when a check failed."""
import copy
import os
import re
import sys

import yaml


def main():
    path, prefix, out = sys.argv[1], sys.argv[2], sys.argv[4]
    hports = [int(x) for x in sys.argv[3].split(",")]
    failed = []

    def check(cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            failed.append(what)
        return cond

    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    kinds = {}
    for d in docs:
        kinds.setdefault(d.get("kind"), []).append(d)
    check(sorted(kinds) == ["ConfigMap", "PodDisruptionBudget", "Service", "StatefulSet"]
          and len(kinds["Service"]) == 2 and all(len(v) == 1 for k, v in kinds.items() if k != "Service"),
          "kinds: ConfigMap, 2 Services, PodDisruptionBudget, StatefulSet (%s)" %
          ", ".join("%d %s" % (len(v), k) for k, v in sorted(kinds.items())))
    api = {"ConfigMap": "v1", "Service": "v1", "PodDisruptionBudget": "policy/v1",
           "StatefulSet": "apps/v1"}
    check(all(d.get("apiVersion") == api.get(d.get("kind")) and d.get("metadata", {}).get("name")
              for d in docs), "apiVersion and metadata.name of each")
    sts = kinds["StatefulSet"][0]
    cm = kinds["ConfigMap"][0]
    spec = sts["spec"]
    tmpl = spec["template"]
    pod = tmpl["spec"]
    labels = tmpl["metadata"]["labels"]
    c = pod["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}

    # The StatefulSet's required fields and what three replicas need.
    check(all(k in spec for k in ("selector", "serviceName", "template")) and
          set(spec["selector"]["matchLabels"].items()) <= set(labels.items()),
          "StatefulSet: selector, serviceName, template; the selector matches the template's labels")
    check(spec.get("replicas") == 3 and spec.get("podManagementPolicy") == "Parallel",
          "replicas 3, podManagementPolicy Parallel (no pod is ready before a majority runs)")
    svc = {s["metadata"]["name"]: s for s in kinds["Service"]}
    head = svc.get(spec["serviceName"], {}).get("spec", {})
    check(head.get("clusterIP") == "None" and head.get("publishNotReadyAddresses") is True and
          set(head.get("selector", {}).items()) <= set(labels.items()) and
          {p["port"] for p in head.get("ports", [])} == set(ports.values()),
          "headless Service %s: clusterIP None, names published before ready, selects the pods, "
          "ports %s" % (spec["serviceName"], sorted(ports.values())))
    clients = [s for n, s in svc.items() if n != spec["serviceName"]]
    check(len(clients) == 1 and clients[0]["spec"].get("clusterIP") != "None" and
          set(clients[0]["spec"]["selector"].items()) <= set(labels.items()) and
          [p.get("targetPort") for p in clients[0]["spec"]["ports"]] == ["http"],
          "client Service %s: selects the pods, HTTP only" %
          (clients[0]["metadata"]["name"] if clients else "?"))
    pdb = kinds["PodDisruptionBudget"][0]["spec"]
    check(pdb.get("maxUnavailable") == 1 and
          set(pdb["selector"]["matchLabels"].items()) <= set(labels.items()),
          "PodDisruptionBudget: one replica at a time")
    vct = spec.get("volumeClaimTemplates", [])
    mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
    check(len(vct) == 1 and mounts.get(vct[0]["metadata"]["name"]) == "/var/lib/stsd" and
          vct[0]["spec"].get("accessModes") == ["ReadWriteOnce"] and
          vct[0]["spec"]["resources"]["requests"].get("storage"),
          "volumeClaimTemplate %s mounted on /var/lib/stsd, ReadWriteOnce" %
          (vct[0]["metadata"]["name"] if vct else "?"))
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    check(all(n in vols or n in [t["metadata"]["name"] for t in vct] for n in mounts) and
          any(v.get("configMap", {}).get("name") == cm["metadata"]["name"] for v in vols.values()),
          "every volumeMount has its volume; the ConfigMap %s is one" % cm["metadata"]["name"])
    probe = c.get("readinessProbe", {}).get("httpGet", {})
    check(probe.get("path") == "/sts/INFO" and probe.get("port") in ports,
          "readinessProbe: GET /sts/INFO on the port named %s" % probe.get("port"))
    psc, csc = pod.get("securityContext", {}), c.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True and psc.get("runAsUser") == 10001 and
          psc.get("fsGroup") == 10001 and csc.get("readOnlyRootFilesystem") is True and
          csc.get("allowPrivilegeEscalation") is False and
          csc.get("capabilities", {}).get("drop") == ["ALL"],
          "securityContext: non-root (10001, fsGroup 10001), read-only root, no privilege "
          "escalation, no capability")
    env = {e["name"]: e for e in c.get("env", [])}
    check(env.get("POD_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") ==
          "metadata.name" and c.get("command", [None])[0] == "/bin/sh",
          "command: /bin/sh with POD_NAME from the downward API (metadata.name)")

    # The ConfigMap: node N+1 is pod N, by the headless Service's names, the ports above.
    props = {}
    for line in cm["data"]["cluster.properties"].splitlines():
        if line.strip() and not line.startswith("#"):
            k, _, v = line.partition("=")
            props[k.strip()] = v.strip()
    want = {"stsd.cluster.node.%d" % (i + 1): "%s-%d.%s:%d http://%s-%d.%s:%d" % (
        sts["metadata"]["name"], i, spec["serviceName"], ports.get("raft", 0),
        sts["metadata"]["name"], i, spec["serviceName"], ports.get("http", 0))
        for i in range(spec.get("replicas", 0))}
    got = {k: v for k, v in props.items() if re.match(r"stsd\.cluster\.node\.\d+$", k)}
    check(got == want and "stsd.cluster.self" not in props,
          "ConfigMap: nodes 1-%d are %s-N.%s:%s, no stsd.cluster.self (the pod's command sets it)"
          % (len(want), sts["metadata"]["name"], spec["serviceName"], ports.get("raft")))

    # The pods, as the controller would make them, for podman kube play.
    cm2 = copy.deepcopy(cm)
    cm2["metadata"]["name"] = "%s-%s" % (prefix, cm["metadata"]["name"])
    for i in range(spec.get("replicas", 0)):
        name = "%s-%s-%d" % (prefix, sts["metadata"]["name"], i)
        p = copy.deepcopy(pod)
        docs_out = [cm2]
        for t in vct:
            claim = "%s-%s" % (t["metadata"]["name"], name)
            docs_out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                             "metadata": {"name": claim}, "spec": t["spec"]})
            p["volumes"].append({"name": t["metadata"]["name"],
                                 "persistentVolumeClaim": {"claimName": claim}})
        for v in p["volumes"]:
            if v.get("configMap", {}).get("name") == cm["metadata"]["name"]:
                v["configMap"]["name"] = cm2["metadata"]["name"]
        pc = p["containers"][0]
        # Only HTTP published (kube play publishes a containerPort without hostPort on the
        # host's same port: raft's would collide between the pods).
        pc["ports"] = [dict(q, hostPort=hports[i], hostIP="127.0.0.1")
                       for q in pc["ports"] if q["name"] == "http"]
        docs_out.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": name, "labels": labels},
                         "spec": dict(p, hostname="%s-%d" % (sts["metadata"]["name"], i),
                                      subdomain=spec["serviceName"])})
        with open(os.path.join(out, "%d.yaml" % i), "w") as f:
            yaml.safe_dump_all(docs_out, f, sort_keys=False)
    # The command alone, for its refusal of a name without an ordinal.
    with open(os.path.join(out, "command.sh"), "w") as f:
        f.write(c["command"][2])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
