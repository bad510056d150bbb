/* SPDX-License-Identifier: Apache-2.0 */
// barriers.js - the meeting points: every barrier with its arrivals filling up toward
// PARTIES (polled with BARRIERS each second while this view is open), its generation,
// and OPEN to let the waiting arrivals go now; under them the ONCE runs in progress (RUNS,
// polled with it), each with its lease left and the callers waiting for it.
import {get, post} from './api.js';
import {h, fill, fmtInt, fmtDuration, toast, confirmDialog} from './util.js';

// The runs in progress: a table of RUNS, rows by name made once and refilled.
function runsPart() {
  const summary = h('p', {class: 'muted', id: 'runs-summary', 'aria-live': 'polite'});
  const tbody = h('tbody');
  const table = h('table', {class: 'lists runs', id: 'runs-table'},
    h('caption', {class: 'sr-only'}, 'Runs of ONCE in progress, with their lease left and waiters'),
    h('thead', {}, h('tr', {},
      h('th', {scope: 'col'}, 'Name'),
      h('th', {scope: 'col', class: 'num'}, 'Lease ends in'),
      h('th', {scope: 'col', class: 'num'}, 'Waiting'))),
    tbody);
  const empty = h('p', {class: 'empty', id: 'runs-empty', hidden: true},
    'No run in progress. ONCE starts one: /sts/ONCE?NAME=o');
  const rows = new Map();
  function row(name) {
    let r = rows.get(name);
    if (r) return r;
    const th = h('th', {scope: 'row', class: 'name'});
    th.textContent = name;
    const ends = h('td', {class: 'num', 'data-label': 'Lease ends in'});
    const waiting = h('td', {class: 'num', 'data-label': 'Waiting'});
    r = {tr: h('tr', {}, th, ends, waiting), ends, waiting};
    rows.set(name, r);
    return r;
  }
  function update(runs) {
    const seen = new Set();
    runs.forEach((run, i) => {
      const r = row(run.name);
      seen.add(run.name);
      const ends = fmtDuration(run.expires_in_ms / 1000);
      if (r.ends.textContent !== ends) r.ends.textContent = ends;
      const w = fmtInt(run.waiters);
      if (r.waiting.textContent !== w) r.waiting.textContent = w;
      r.tr.classList.toggle('draining', run.waiters > 0);
      if (tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
    });
    for (const [name, r] of rows) {
      if (!seen.has(name)) { r.tr.remove(); rows.delete(name); }
    }
    const waiting = runs.reduce((n, r) => n + r.waiters, 0);
    summary.textContent = `${fmtInt(runs.length)} run${runs.length === 1 ? '' : 's'} in progress, ` +
      `${fmtInt(waiting)} waiting`;
    empty.hidden = runs.length > 0;
  }
  const el = h('div', {class: 'runs-part'},
    h('div', {class: 'view-head'}, h('h2', {id: 'runs-h'}, 'Runs (ONCE)'), summary),
    h('div', {class: 'table-wrap'}, table), empty);
  return {el, update};
}

export function barriersView() {
  const summary = h('p', {class: 'muted', id: 'barriers-summary', 'aria-live': 'polite'});
  const tbody = h('tbody');
  const table = h('table', {class: 'lists barriers', id: 'barriers-table'},
    h('caption', {class: 'sr-only'}, 'Barriers, with their arrivals and generation'),
    h('thead', {}, h('tr', {},
      h('th', {scope: 'col'}, 'Name'),
      h('th', {scope: 'col', class: 'fill-col'}, 'Arrived'),
      h('th', {scope: 'col', class: 'num'}, 'Generation'),
      h('th', {scope: 'col'}, h('span', {class: 'sr-only'}, 'Actions')))),
    tbody);
  const empty = h('p', {class: 'empty', hidden: true},
    'No barriers yet. A BARRIER request creates one: /sts/BARRIER?NAME=b&PARTIES=n');

  // Row elements by name, made once and refilled, so focus survives the polls.
  const rows = new Map();
  function row(name) {
    let r = rows.get(name);
    if (r) return r;
    const meter = h('progress', {max: 1, value: 0});
    const count = h('span', {class: 'count'});
    const gen = h('td', {class: 'num', 'data-label': 'Generation'});
    const open = h('button', {type: 'button', class: 'open', onclick: () => openNow(name)}, 'Open now');
    const th = h('th', {scope: 'row', class: 'name'});
    th.textContent = name;
    const tr = h('tr', {}, th, h('td', {class: 'fill-col', 'data-label': 'Arrived'}, meter, ' ', count),
      gen, h('td', {}, open));
    r = {tr, meter, count, gen, open};
    rows.set(name, r);
    return r;
  }

  async function openNow(name) {
    if (!await confirmDialog('Open the barrier now?',
      `OPEN lets every arrival waiting at ${name} go now, fewer than its parties.`, 'Open now')) return;
    try {
      const a = await post('OPEN', {NAME: name});
      toast(`${name}: ${fmtInt(a.released)} released (generation ${a.generation}).`);
      await poll();
    } catch (e) {
      toast(e.message, 'error');
    }
  }

  let barriers = [];
  let runs = [];
  const runsView = runsPart();
  function update() {
    runsView.update(runs);
    const seen = new Set();
    barriers.forEach((b, i) => {
      const r = row(b.name);
      seen.add(b.name);
      r.meter.max = Math.max(1, b.parties);
      r.meter.value = b.arrived;
      r.meter.setAttribute('aria-label', `${b.name}: ${b.arrived} of ${b.parties} arrived`);
      const text = `${fmtInt(b.arrived)} / ${fmtInt(b.parties)}`;
      if (r.count.textContent !== text) r.count.textContent = text;
      const g = fmtInt(b.generation);
      if (r.gen.textContent !== g) r.gen.textContent = g;
      r.open.disabled = b.arrived === 0;
      r.tr.classList.toggle('draining', b.arrived > 0);
      if (tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
    });
    for (const [name, r] of rows) {
      if (!seen.has(name)) { r.tr.remove(); rows.delete(name); }
    }
    const waiting = barriers.reduce((n, b) => n + b.arrived, 0);
    summary.textContent = `${fmtInt(barriers.length)} barrier${barriers.length === 1 ? '' : 's'}, ` +
      `${fmtInt(waiting)} waiting`;
    empty.hidden = barriers.length > 0;
  }

  async function poll() {
    const [b, r] = await Promise.all([get('BARRIERS'), get('RUNS')]);
    barriers = b.barriers || [];
    runs = r.runs || [];
    update();
  }

  const el = h('section', {class: 'view', 'aria-labelledby': 'barriers-h'},
    h('div', {class: 'view-head'}, h('h1', {id: 'barriers-h'}, 'Barriers'), summary),
    h('div', {class: 'table-wrap'}, table), empty, runsView.el);
  fill(tbody);
  return {el, poll, update, title: 'Barriers'};
}
