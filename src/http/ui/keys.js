/* SPDX-License-Identifier: Apache-2.0 */
// keys.js - the keys beside the lists (polled with KEYS instead of STATUS while this view
// is open): name, value, version, watchers (GETs waiting for a change) and INCRs waiting
// to fit; filtered, paged; SET from a small form, DEL after a confirmation.
import {get, post} from './api.js';
import {h, fmtInt, toast, confirmDialog} from './util.js';

const PAGE = 100;

// Kept across visits to the view.
const prefs = {filter: '', page: 0};

// A value (or name) as the server sent it: text, or base64 when it is not UTF-8.
function text(k, field) {
  return k[field] !== undefined ? k[field] : `base64: ${k[`${field}_base64`]}`;
}

export function keysView() {
  let keys = [];            // the last KEYS, sorted by name as the server sends it
  let loaded = false;
  const changed = () => window.dispatchEvent(new Event('stsd:changed'));

  const filter = h('input', {id: 'keys-filter', type: 'search', placeholder: 'part of a name',
    autocomplete: 'off', spellcheck: 'false', value: prefs.filter,
    oninput: () => { prefs.filter = filter.value; prefs.page = 0; update(); }});
  const summary = h('p', {class: 'muted', id: 'keys-summary', 'aria-live': 'polite'});

  const tbody = h('tbody', {id: 'keys-body'});
  const table = h('table', {class: 'keys', id: 'keys-table'},
    h('caption', {class: 'sr-only'}, 'Keys, with their values, versions and waiting requests'),
    h('thead', {}, h('tr', {},
      h('th', {scope: 'col'}, 'Name'), h('th', {scope: 'col'}, 'Value'),
      h('th', {scope: 'col', class: 'num'}, 'Version'), h('th', {scope: 'col', class: 'num'}, 'Watchers'),
      h('th', {scope: 'col', class: 'num'}, 'INCRs waiting'), h('th', {scope: 'col'}, h('span', {class: 'sr-only'}, 'Actions')))),
    tbody);
  const empty = h('p', {class: 'empty', hidden: true});

  const prev = h('button', {type: 'button', id: 'keys-prev', onclick: () => { prefs.page--; update(); }},
    '‹ Previous');
  const next = h('button', {type: 'button', id: 'keys-next', onclick: () => { prefs.page++; update(); }},
    'Next ›');
  const pageInfo = h('span', {class: 'muted'});
  const pager = h('nav', {class: 'pager', 'aria-label': 'Pages of keys'}, prev, pageInfo, next);

  // ---- SET ----
  const setName = h('input', {id: 'set-name', type: 'text', autocomplete: 'off', spellcheck: 'false', required: true});
  const setValue = h('input', {id: 'set-value', type: 'text', autocomplete: 'off', spellcheck: 'false'});
  const setForm = h('form', {class: 'controls', id: 'set-form', onsubmit: async (e) => {
    e.preventDefault();
    const name = setName.value;
    try {
      const r = await post('SET', {NAME: name, VALUE: setValue.value});
      toast(`${name} is set (version ${r.version !== undefined ? r.version : r.message}).`);
      setValue.value = '';
      changed();
    } catch (err) {
      toast(err.message, 'error');
    }
  }},
  h('div', {class: 'field'}, h('label', {for: 'set-name'}, 'Name'), setName),
  h('div', {class: 'field grow'}, h('label', {for: 'set-value'}, 'Value'), setValue),
  h('div', {class: 'field end'}, h('button', {type: 'submit', class: 'primary', id: 'set-submit'}, 'Set')));

  // ---- DEL ----
  async function del(k) {
    const name = text(k, 'name');
    const w = k.watchers + k.waiters;
    const woken = w ? ` Its ${fmtInt(w)} waiting request${w === 1 ? '' : 's'} wake${w === 1 ? 's' : ''}.` : '';
    if (!await confirmDialog(`Delete ${name}?`,
      `DEL removes the key ${name} (version ${fmtInt(k.version)}).${woken} This cannot be undone.`,
      'Delete the key')) return;
    try {
      await post('DEL', {NAME: k.name});
      toast(`${name} is deleted.`);
      changed();
    } catch (err) {
      toast(err.status === 404 ? `${name} was deleted already.` : err.message, 'error');
      changed();
    }
  }

  function edit(k) {
    setName.value = k.name;
    setValue.value = k.value !== undefined ? k.value : '';
    setValue.focus();
  }

  // Row elements are made once and refilled, so focus and scroll survive updates; their
  // buttons act on the key the row shows now.
  const rows = [];
  function row(i) {
    if (rows[i]) return rows[i];
    const r = {key: null};
    r.name = h('th', {scope: 'row', class: 'name'});
    r.value = h('td', {class: 'value', 'data-label': 'Value'});
    r.cells = ['version', 'watchers', 'waiters'].map((f, n) =>
      h('td', {class: 'num', 'data-label': ['Version', 'Watchers', 'INCRs waiting'][n]}));
    r.edit = h('button', {type: 'button', class: 'edit', onclick: () => r.key && edit(r.key)}, 'Edit');
    r.del = h('button', {type: 'button', class: 'danger del', onclick: () => r.key && del(r.key)}, 'Delete…');
    r.tr = h('tr', {}, r.name, r.value, r.cells, h('td', {class: 'act'}, r.edit, ' ', r.del));
    rows[i] = r;
    return r;
  }

  function set(el, t) {
    if (el.textContent !== t) el.textContent = t;
  }

  function update() {
    const f = prefs.filter.trim().toLowerCase();
    const shownAll = f ? keys.filter((k) => text(k, 'name').toLowerCase().includes(f)) : keys;
    const pages = Math.max(1, Math.ceil(shownAll.length / PAGE));
    prefs.page = Math.min(Math.max(0, prefs.page), pages - 1);
    const shown = shownAll.slice(prefs.page * PAGE, prefs.page * PAGE + PAGE);
    const total = keys.length;
    summary.textContent = f ? `${fmtInt(shownAll.length)} of ${fmtInt(total)} keys match`
      : `${fmtInt(total)} key${total === 1 ? '' : 's'}`;

    for (let i = 0; i < shown.length; i++) {
      const k = shown[i];
      const r = row(i);
      const name = text(k, 'name');
      r.key = k;
      set(r.name, name);
      set(r.value, text(k, 'value'));
      r.value.classList.toggle('b64', k.value === undefined);
      set(r.cells[0], fmtInt(k.version));
      set(r.cells[1], fmtInt(k.watchers));
      set(r.cells[2], fmtInt(k.waiters));
      r.edit.setAttribute('aria-label', `Edit ${name}`);
      r.del.setAttribute('aria-label', `Delete ${name}`);
      if (tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
    }
    while (tbody.children.length > shown.length) tbody.lastChild.remove();

    empty.hidden = shown.length > 0 || !loaded;
    empty.textContent = total ? 'No key matches the filter.'
      : 'No keys yet. Set one below, or with SET, INCR from any injector.';
    table.hidden = shown.length === 0;
    pager.hidden = pages <= 1;
    prev.disabled = prefs.page === 0;
    next.disabled = prefs.page >= pages - 1;
    pageInfo.textContent = `Page ${prefs.page + 1} of ${pages}`;
  }

  async function poll() {
    keys = (await get('KEYS')).keys || [];
    loaded = true;
  }

  const el = h('section', {class: 'view', 'aria-labelledby': 'keys-h'},
    h('div', {class: 'view-head'}, h('h1', {id: 'keys-h'}, 'Keys'), summary),
    h('p', {class: 'muted'}, 'Shared state across injectors: SET, GET (watching), INCR (counters, semaphores), DEL.'),
    h('div', {class: 'controls'},
      h('div', {class: 'field grow'}, h('label', {for: 'keys-filter'}, 'Filter'), filter)),
    h('div', {class: 'table-wrap'}, table), empty, pager,
    h('section', {'aria-labelledby': 'set-h'}, h('h2', {id: 'set-h'}, 'Set a key'), setForm));
  return {el, update, poll, title: 'Keys'};
}
