/* SPDX-License-Identifier: Apache-2.0 */
// list.js - one list: live counts and rates over time, its lines page by page (PEEK,
// which consumes nothing), search, ADD, SAVE and RESET.
import {get, post} from './api.js';
import {h, fill, fmtInt, fmtRate, fmtDuration, toast, confirmDialog} from './util.js';
import {state, findList} from './state.js';
import {chart, updateChart} from './chart.js';

const PAGE = 100;

export function listView(name) {
  const changed = () => window.dispatchEvent(new Event('stsd:changed'));

  // ---- live figures and charts ----
  const figs = {};
  const stat = (key, label) => h('div', {class: 'stat'},
    h('dt', {}, label), figs[key] = h('dd', {id: `stat-${key}`}, '—'));
  const stats = h('dl', {class: 'stats'}, stat('lines', 'Lines'), stat('leased', 'On loan'),
    stat('waiters', 'Waiters'), stat('added_per_s', 'In/s'), stat('removed_per_s', 'Out/s'),
    stat('empty_in_s', 'Empty in'));
  const rates = chart('Lines in and out per second',
    [{label: 'in/s', cls: 'in'}, {label: 'out/s', cls: 'out'}]);
  const length = chart('Lines', [{label: 'lines', cls: 'lines'}]);
  const missing = h('p', {class: 'notice', hidden: true}, 'This list does not exist (yet).');

  // ---- browsing and search ----
  const pattern = h('input', {id: 'search-pattern', type: 'search', autocomplete: 'off',
    spellcheck: 'false', placeholder: 'text or regex'});
  const mode = h('select', {id: 'search-mode'},
    h('option', {value: 'SUBSTRING'}, 'contains'),
    h('option', {value: 'EQUALS'}, 'equals'),
    h('option', {value: 'REGEX_FIND'}, 'regex, anywhere'),
    h('option', {value: 'REGEX_MATCH'}, 'regex, whole line'));
  const clear = h('button', {type: 'button', id: 'search-clear', hidden: true,
    onclick: () => { pattern.value = ''; browse.search = null; loadPage(0); }}, 'Clear');
  const searchForm = h('form', {class: 'controls', role: 'search', id: 'search-form',
    onsubmit: (e) => {
      e.preventDefault();
      browse.search = pattern.value ? {match: pattern.value, mode: mode.value} : null;
      loadPage(0);
    }},
  h('div', {class: 'field grow'}, h('label', {for: 'search-pattern'}, 'Find lines'), pattern),
  h('div', {class: 'field'}, h('label', {for: 'search-mode'}, 'Match'), mode),
  h('div', {class: 'field end'}, h('button', {type: 'submit', class: 'primary'}, 'Search'), clear));

  const tbody = h('tbody', {id: 'lines-body'});
  const linesTable = h('table', {class: 'lines', id: 'lines-table'},
    h('caption', {class: 'sr-only'}, `Lines of ${name}`),
    h('thead', {}, h('tr', {}, h('th', {scope: 'col', class: 'num'}, 'Position'),
      h('th', {scope: 'col'}, 'Line'))), tbody);
  const pageInfo = h('span', {class: 'muted', id: 'lines-info', 'aria-live': 'polite'});
  const first = h('button', {type: 'button', onclick: () => loadPage(0)}, '« First');
  const prev = h('button', {type: 'button', id: 'lines-prev',
    onclick: () => loadPage(Math.max(0, browse.offset - PAGE))}, '‹ Previous');
  const next = h('button', {type: 'button', id: 'lines-next',
    onclick: () => loadPage(browse.next)}, 'Next ›');
  const refresh = h('button', {type: 'button', id: 'lines-refresh',
    onclick: () => loadPage(browse.offset)}, 'Refresh');
  const pager = h('nav', {class: 'pager', 'aria-label': 'Pages of lines'},
    first, prev, pageInfo, next, refresh);
  const browse = {offset: 0, next: null, search: null};

  async function loadPage(offset) {
    const params = {FILENAME: name, OFFSET: offset, LIMIT: PAGE};
    if (browse.search) {
      params.MATCH = browse.search.match;
      params.FIND_MODE = browse.search.mode;
    }
    try {
      const data = await get('PEEK', params);
      browse.offset = offset;
      browse.next = data.next_offset;
      fill(tbody, data.lines.map((l) => h('tr', {},
        h('td', {class: 'num'}, fmtInt(l.pos)),
        h('td', {class: 'line'}, l.line !== undefined ? l.line
          : h('span', {class: 'b64', title: 'Not UTF-8: shown in base64'}, `base64: ${l.line_base64}`)))));
      const n = data.lines.length;
      if (browse.search) {
        pageInfo.textContent = n ? `${fmtInt(n)} match${n === 1 ? '' : 'es'} from position ${fmtInt(offset)}`
          + (data.next_offset !== null ? ', more after' : '') : 'No match.';
      } else {
        pageInfo.textContent = n ? `Lines ${fmtInt(data.lines[0].pos + 1)}–${fmtInt(data.lines[n - 1].pos + 1)} of ${fmtInt(data.length)}`
          : `No line here (the list has ${fmtInt(data.length)}).`;
      }
      prev.hidden = Boolean(browse.search);
      first.disabled = offset === 0;
      prev.disabled = offset === 0;
      next.disabled = data.next_offset === null;
      clear.hidden = !browse.search;
      missing.hidden = true;
    } catch (e) {
      if (e.status === 404) {
        fill(tbody);
        pageInfo.textContent = '';
        missing.hidden = false;
        next.disabled = true;
      } else {
        toast(e.message, 'error');
      }
    }
  }

  // ---- ADD ----
  const addLine = h('input', {id: 'add-line', type: 'text', autocomplete: 'off', spellcheck: 'false', required: true});
  const addWhere = h('select', {id: 'add-mode'}, h('option', {value: 'LAST'}, 'at the end'),
    h('option', {value: 'FIRST'}, 'at the start'));
  const addUnique = h('input', {id: 'add-unique', type: 'checkbox'});
  const addForm = h('form', {class: 'controls', id: 'add-form', onsubmit: async (e) => {
    e.preventDefault();
    try {
      await post('ADD', {FILENAME: name, LINE: addLine.value, ADD_MODE: addWhere.value,
        UNIQUE: addUnique.checked ? 'TRUE' : 'FALSE'});
      toast('Line added.');
      addLine.value = '';
      changed();
      loadPage(browse.search ? 0 : browse.offset);
    } catch (err) {
      toast(err.status === 409 ? 'Not added: that line is already in the list.' : err.message, 'error');
    }
  }},
  h('div', {class: 'field grow'}, h('label', {for: 'add-line'}, 'Line'), addLine),
  h('div', {class: 'field'}, h('label', {for: 'add-mode'}, 'Where'), addWhere),
  h('div', {class: 'field check'}, addUnique, h('label', {for: 'add-unique'}, 'Only if not there yet')),
  h('div', {class: 'field end'}, h('button', {type: 'submit', class: 'primary', id: 'add-submit'}, 'Add')));

  // ---- SAVE and RESET ----
  const stamp = h('input', {id: 'save-stamp', type: 'checkbox', checked: true});
  const saveForm = h('form', {class: 'controls', id: 'save-form', onsubmit: async (e) => {
    e.preventDefault();
    try {
      const r = await post('SAVE', {FILENAME: name, ADD_TIMESTAMP: stamp.checked ? 'true' : 'false'});
      const n = r.lines !== undefined ? r.lines : r.message;
      toast(`Saved ${n} line${String(n) === '1' ? '' : 's'} to the dataset directory${stamp.checked ? ' (with a timestamp)' : ` as ${name}`}.`);
    } catch (err) {
      toast(err.message, 'error');
    }
  }},
  h('div', {class: 'field check'}, stamp, h('label', {for: 'save-stamp'}, 'Add a timestamp to the file name')),
  h('div', {class: 'field end'}, h('button', {type: 'submit', id: 'save-submit'}, 'Save to file')));
  const reset = h('button', {type: 'button', class: 'danger', id: 'reset', onclick: async () => {
    const l = findList(name);
    const n = l ? `its ${fmtInt(l.lines)} line${l.lines === 1 ? '' : 's'}` : 'every line';
    if (!await confirmDialog(`Empty ${name}?`, `RESET removes ${n}. This cannot be undone.`, 'Empty the list')) return;
    try {
      await post('RESET', {FILENAME: name});
      toast(`${name} is now empty.`);
      changed();
      loadPage(0);
    } catch (err) {
      toast(err.message, 'error');
    }
  }}, 'Empty the list (RESET)…');

  function update() {
    const l = findList(name);
    for (const [key, el] of Object.entries(figs)) {
      const v = l ? l[key] : null;
      el.textContent = key === 'empty_in_s' ? (l ? fmtDuration(v) : '—')
        : key.endsWith('per_s') ? fmtRate(v) : fmtInt(v);
    }
    const hist = state.byName.get(name);
    updateChart(rates, [hist?.added, hist?.removed], fmtRate);
    updateChart(length, [hist?.lines], fmtInt);
    if (l) missing.hidden = true;
  }

  const el = h('section', {class: 'view', 'aria-labelledby': 'list-h'},
    h('p', {class: 'crumbs'}, h('a', {href: '#/'}, '‹ All lists')),
    h('h1', {id: 'list-h', class: 'list-name'}, name),
    missing, stats,
    h('div', {class: 'charts'}, rates, length),
    h('section', {'aria-labelledby': 'browse-h'}, h('h2', {id: 'browse-h'}, 'Lines'),
      h('p', {class: 'muted'}, 'Browsing and searching consume nothing.'),
      searchForm, h('div', {class: 'table-wrap'}, linesTable), pager),
    h('section', {'aria-labelledby': 'add-h'}, h('h2', {id: 'add-h'}, 'Add a line'), addForm),
    h('section', {'aria-labelledby': 'keep-h'}, h('h2', {id: 'keep-h'}, 'Save or empty'),
      saveForm, h('p', {}, reset)));
  loadPage(0);
  return {el, update, title: name};
}
