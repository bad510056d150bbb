/* SPDX-License-Identifier: Apache-2.0 */
// load.js - loading lists: INITFILE from the files of the dataset directory (FILES),
// or LOAD of a CSV file from this computer; replacing a list asks first.
import {get, post, upload} from './api.js';
import {h, fill, fmtInt, fmtBytes, fmtTime, toast, confirmDialog} from './util.js';
import {findList} from './state.js';

// Asks before a load replaces a list that exists; true to go on.
async function mayReplace(name) {
  const l = findList(name);
  if (!l) return true;
  return confirmDialog(`Replace ${name}?`,
    `A list named ${name} exists with ${fmtInt(l.lines)} line${l.lines === 1 ? '' : 's'}. `
    + 'Loading replaces all of them.', 'Replace the list');
}

function done(name, r) {
  const n = r.lines !== undefined ? r.lines : r.message;
  toast(`Loaded ${n} line${String(n) === '1' ? '' : 's'} into ${name}.`);
  window.dispatchEvent(new Event('stsd:changed'));
}

export function loadView() {
  // ---- files of the dataset directory ----
  const filter = h('input', {id: 'files-filter', type: 'search', autocomplete: 'off',
    placeholder: 'part of a name', oninput: () => render()});
  const tbody = h('tbody', {id: 'files-body'});
  const info = h('p', {class: 'muted', 'aria-live': 'polite'});
  let files = [];

  async function initfile(name, button) {
    if (!await mayReplace(name)) return;
    button.disabled = true;
    try {
      done(name, await post('INITFILE', {FILENAME: name}));
    } catch (e) {
      toast(e.message, 'error');
    } finally {
      button.disabled = false;
    }
  }

  function render() {
    const f = filter.value.trim().toLowerCase();
    const shown = f ? files.filter((x) => x.name.toLowerCase().includes(f)) : files;
    fill(tbody, shown.slice(0, 500).map((x) => {
      const b = h('button', {type: 'button', 'aria-label': `Load ${x.name}`}, 'Load');
      b.addEventListener('click', () => initfile(x.name, b));
      return h('tr', {}, h('th', {scope: 'row', class: 'name'}, x.name),
        h('td', {class: 'num', 'data-label': 'Size'}, fmtBytes(x.size)),
        h('td', {'data-label': 'Modified'}, fmtTime(x.mtime)),
        h('td', {class: 'act'}, b));
    }));
    info.textContent = files.length
      ? `${fmtInt(shown.length)} of ${fmtInt(files.length)} files${shown.length > 500 ? ' (first 500 shown)' : ''}`
      : 'The dataset directory holds no file.';
  }

  async function refresh() {
    try {
      files = (await get('FILES')).files || [];
      render();
    } catch (e) {
      info.textContent = e.message;
    }
  }

  // ---- upload ----
  const file = h('input', {id: 'upload-file', type: 'file', accept: '.csv,.txt,text/csv,text/plain', required: true,
    onchange: () => { if (file.files[0] && !listName.dataset.edited) listName.value = file.files[0].name; }});
  const listName = h('input', {id: 'upload-name', type: 'text', required: true, maxlength: 128,
    autocomplete: 'off', spellcheck: 'false', oninput: () => { listName.dataset.edited = '1'; }});
  const send = h('button', {type: 'submit', class: 'primary', id: 'upload-submit'}, 'Upload and load');
  const form = h('form', {class: 'controls', id: 'upload-form', onsubmit: async (e) => {
    e.preventDefault();
    const f = file.files[0];
    const name = listName.value.trim();
    if (!f || !name) return;
    if (!await mayReplace(name)) return;
    const body = new FormData();
    body.append('FILENAME', name);
    body.append('FILE', f, f.name);
    send.disabled = true;
    try {
      done(name, await upload('LOAD', body));
      form.reset();
      delete listName.dataset.edited;
    } catch (err) {
      toast(err.status === 413 ? 'That file is larger than the server accepts (stsd.maxBodySize).' : err.message, 'error');
    } finally {
      send.disabled = false;
    }
  }},
  h('div', {class: 'field grow'}, h('label', {for: 'upload-file'}, 'CSV file'), file),
  h('div', {class: 'field grow'}, h('label', {for: 'upload-name'}, 'List name'), listName),
  h('div', {class: 'field end'}, send));

  const el = h('section', {class: 'view', 'aria-labelledby': 'load-h'},
    h('h1', {id: 'load-h'}, 'Load'),
    h('section', {'aria-labelledby': 'upload-h'}, h('h2', {id: 'upload-h'}, 'From this computer'),
      h('p', {class: 'muted'}, 'Sends a file to the server (LOAD); it becomes a list, one line per line of the file.'),
      form),
    h('section', {'aria-labelledby': 'files-h'}, h('h2', {id: 'files-h'}, 'From the dataset directory'),
      h('div', {class: 'controls'}, h('div', {class: 'field grow'},
        h('label', {for: 'files-filter'}, 'Filter'), filter)),
      info,
      h('div', {class: 'table-wrap'}, h('table', {class: 'files', id: 'files-table'},
        h('caption', {class: 'sr-only'}, 'Files INITFILE can load'),
        h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'File'), h('th', {scope: 'col', class: 'num'}, 'Size'),
          h('th', {scope: 'col'}, 'Modified'), h('th', {scope: 'col'}, h('span', {class: 'sr-only'}, 'Action')))),
        tbody))));
  refresh();
  return {el, title: 'Load'};
}
