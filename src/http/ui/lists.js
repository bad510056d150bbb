/* SPDX-License-Identifier: Apache-2.0 */
// lists.js - every list at a glance: counts, rates, time to empty and a 5-minute
// sparkline; sortable, filterable, paged (100 rows, so 10,000 lists stay smooth).
import {h, fmtInt, fmtRate, fmtDuration} from './util.js';
import {state} from './state.js';
import {sparkline, updateSparkline} from './chart.js';

const PAGE = 100;

const COLUMNS = [
  {key: 'name', label: 'Name', num: false},
  {key: 'lines', label: 'Lines', num: true, fmt: fmtInt},
  {key: 'leased', label: 'On loan', num: true, fmt: fmtInt},
  {key: 'waiters', label: 'Waiters', num: true, fmt: fmtInt},
  {key: 'added_per_s', label: 'In/s', num: true, fmt: fmtRate},
  {key: 'removed_per_s', label: 'Out/s', num: true, fmt: fmtRate},
  {key: 'empty_in_s', label: 'Empty in', num: true, fmt: fmtDuration},
];

// Kept across visits to the view.
const prefs = {filter: '', key: 'name', dir: 1, page: 0};

function compare(key, dir) {
  if (key === 'name') {
    return (a, b) => dir * (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  }
  // Missing values (null time to empty: not draining) sort last either way.
  return (a, b) => {
    const x = a[key];
    const y = b[key];
    if (x === null || x === undefined) return y === null || y === undefined ? 0 : 1;
    if (y === null || y === undefined) return -1;
    return dir * (x - y) || (a.name < b.name ? -1 : 1);
  };
}

export function listsView() {
  const filter = h('input', {id: 'lists-filter', type: 'search', placeholder: 'part of a name',
    autocomplete: 'off', spellcheck: 'false', value: prefs.filter,
    oninput: () => { prefs.filter = filter.value; prefs.page = 0; update(); }});
  const sortSel = h('select', {id: 'lists-sort', onchange: () => {
    prefs.key = sortSel.value; prefs.page = 0; update();
  }}, COLUMNS.map((c) => h('option', {value: c.key}, c.label)));
  const dirBtn = h('button', {type: 'button', id: 'lists-dir', onclick: () => {
    prefs.dir = -prefs.dir; update();
  }});
  const summary = h('p', {class: 'muted', id: 'lists-summary', 'aria-live': 'polite'});

  const heads = COLUMNS.map((c) => {
    const b = h('button', {type: 'button', class: 'sort', onclick: () => {
      if (prefs.key === c.key) prefs.dir = -prefs.dir;
      else { prefs.key = c.key; prefs.dir = c.num ? -1 : 1; }
      prefs.page = 0;
      update();
    }}, c.label);
    return h('th', {scope: 'col', class: c.num ? 'num' : ''}, b);
  });
  const tbody = h('tbody');
  const table = h('table', {class: 'lists', id: 'lists-table'},
    h('caption', {class: 'sr-only'}, 'Lists, with their counts, rates and last 5 minutes'),
    h('thead', {}, h('tr', {}, heads, h('th', {scope: 'col', class: 'spark-col'}, 'Last 5 min'))),
    tbody);
  const empty = h('p', {class: 'empty', hidden: true});

  const prev = h('button', {type: 'button', id: 'lists-prev', onclick: () => { prefs.page--; update(); }},
    '‹ Previous');
  const next = h('button', {type: 'button', id: 'lists-next', onclick: () => { prefs.page++; update(); }},
    'Next ›');
  const pageInfo = h('span', {class: 'muted'});
  const pager = h('nav', {class: 'pager', 'aria-label': 'Pages of lists'}, prev, pageInfo, next);

  // Row elements are made once and refilled, so focus and scroll survive updates.
  const rows = [];
  function row(i) {
    if (rows[i]) return rows[i];
    const link = h('a', {});
    const cells = COLUMNS.slice(1).map((c) => h('td', {class: 'num', 'data-label': c.label}));
    const spark = sparkline();
    const tr = h('tr', {}, h('th', {scope: 'row', class: 'name'}, link), cells,
      h('td', {class: 'spark-col', 'data-label': 'Last 5 min'}, spark));
    rows[i] = {tr, link, cells, spark};
    return rows[i];
  }

  function update() {
    const f = prefs.filter.trim().toLowerCase();
    let lists = f ? state.lists.filter((l) => l.name.toLowerCase().includes(f)) : state.lists;
    if (!(prefs.key === 'name' && prefs.dir === 1)) lists = lists.slice().sort(compare(prefs.key, prefs.dir));
    const pages = Math.max(1, Math.ceil(lists.length / PAGE));
    prefs.page = Math.min(Math.max(0, prefs.page), pages - 1);
    const shown = lists.slice(prefs.page * PAGE, prefs.page * PAGE + PAGE);

    sortSel.value = prefs.key;
    dirBtn.textContent = prefs.dir === 1 ? 'Ascending' : 'Descending';
    dirBtn.setAttribute('aria-label', `Sort order: ${dirBtn.textContent}`);
    COLUMNS.forEach((c, k) => {
      heads[k].setAttribute('aria-sort', c.key === prefs.key
        ? (prefs.dir === 1 ? 'ascending' : 'descending') : 'none');
    });
    const total = state.lists.length;
    // Before the first answer there is no count to tell: "0 lists" would be a false one.
    summary.textContent = !state.updated ? 'Loading…'
      : f ? `${fmtInt(lists.length)} of ${fmtInt(total)} lists match`
      : `${fmtInt(total)} list${total === 1 ? '' : 's'}`;

    for (let i = 0; i < shown.length; i++) {
      const l = shown[i];
      const r = row(i);
      if (r.link.textContent !== l.name) {
        r.link.textContent = l.name;
        r.link.href = `#/list/${encodeURIComponent(l.name)}`;
      }
      COLUMNS.slice(1).forEach((c, k) => {
        const text = c.fmt(l[c.key]);
        if (r.cells[k].textContent !== text) r.cells[k].textContent = text;
      });
      r.tr.classList.toggle('draining', l.empty_in_s !== null && l.empty_in_s !== undefined);
      updateSparkline(r.spark, state.byName.get(l.name)?.lines);
      if (r.tr.parentNode !== tbody || tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
    }
    while (tbody.children.length > shown.length) tbody.lastChild.remove();

    empty.hidden = shown.length > 0 || !state.updated;
    empty.textContent = total ? 'No list matches the filter.'
      : 'No lists yet. Load a file from the Load view, or ADD a line.';
    pager.hidden = pages <= 1;
    prev.disabled = prefs.page === 0;
    next.disabled = prefs.page >= pages - 1;
    pageInfo.textContent = `Page ${prefs.page + 1} of ${pages}`;
  }

  const el = h('section', {class: 'view', 'aria-labelledby': 'lists-h'},
    h('div', {class: 'view-head'}, h('h1', {id: 'lists-h'}, 'Lists'), summary),
    h('div', {class: 'controls'},
      h('div', {class: 'field'}, h('label', {for: 'lists-filter'}, 'Filter'), filter),
      h('div', {class: 'field'}, h('label', {for: 'lists-sort'}, 'Sort by'), sortSel),
      h('div', {class: 'field end'}, dirBtn)),
    h('div', {class: 'table-wrap'}, table), empty, pager);
  return {el, update, title: 'Lists'};
}

