/* SPDX-License-Identifier: Apache-2.0 */
// server.js - the server: version, uptime, connections, journal state (polled with INFO
// instead of STATUS while this view is open; changes per fsync between two polls), the
// effective configuration, and STOP.
import {get, post} from './api.js';
import {h, fill, fmtInt, fmtBytes, fmtDuration, toast, confirmDialog} from './util.js';

export function serverView() {
  const dd = {};
  const item = (key, label) => [h('dt', {}, label), dd[key] = h('dd', {id: `info-${key}`}, '—')];
  const general = h('dl', {class: 'kv'}, item('version', 'Version'), item('uptime', 'Up for'),
    item('connections', 'Connections'), item('lists', 'Lists'));
  const journal = h('dl', {class: 'kv'}, item('j_enabled', 'Journal'), item('j_fsync', 'fsync policy'),
    item('j_bytes', 'Size'), item('j_fsync_s', 'Last fsync took'), item('j_batch', 'Changes per fsync'),
    item('j_errors', 'Write errors'), item('j_writable', 'Accepting changes'));
  let last = null;          // the journal's counters at the previous poll
  const config = h('tbody', {id: 'config-body'});
  const configFilter = h('input', {id: 'config-filter', type: 'search', autocomplete: 'off',
    placeholder: 'part of a key', oninput: () => renderConfig()});
  let cfg = {};

  function renderConfig() {
    const f = configFilter.value.trim().toLowerCase();
    fill(config, Object.entries(cfg).filter(([k]) => !f || k.toLowerCase().includes(f))
      .map(([k, v]) => h('tr', {}, h('th', {scope: 'row', class: 'key'}, k), h('td', {class: 'value'}, String(v)))));
  }

  async function poll() {
    const i = await get('INFO');
    dd.version.textContent = i.version;
    dd.uptime.textContent = fmtDuration(i.uptime_s);
    dd.connections.textContent = fmtInt(i.connections);
    dd.lists.textContent = fmtInt(i.lists);
    const j = i.journal || {};
    dd.j_enabled.textContent = j.enabled ? 'on' : 'off';
    dd.j_fsync.textContent = j.enabled ? j.fsync : '—';
    dd.j_bytes.textContent = j.enabled ? fmtBytes(j.bytes) : '—';
    dd.j_fsync_s.textContent = j.last_fsync_seconds === null || j.last_fsync_seconds === undefined
      ? '—' : `${(j.last_fsync_seconds * 1000).toFixed(2)} ms`;
    // With fsync=always, how many changes each group commit carried since the last poll.
    const syncs = last && j.enabled ? j.log_syncs - last.log_syncs : 0;
    dd.j_batch.textContent = syncs > 0 ? ((j.records - last.records) / syncs).toFixed(1) : '—';
    last = j.enabled ? {records: j.records, log_syncs: j.log_syncs} : null;
    dd.j_errors.textContent = fmtInt(j.errors);
    dd.j_writable.textContent = j.writable === false ? 'NO: changes are refused' : 'yes';
    dd.j_writable.classList.toggle('bad', j.writable === false);
  }

  (async () => {
    try {
      cfg = (await get('CONFIG')).config || {};
      renderConfig();
    } catch (e) {
      toast(e.message, 'error');
    }
  })();

  const stop = h('button', {type: 'button', class: 'danger', id: 'stop', onclick: async () => {
    if (!await confirmDialog('Stop the server?', 'STOP ends stsd: every client loses it until it is started again.', 'Stop stsd')) return;
    try {
      await post('STOP');
      toast('stsd is stopping.');
    } catch (e) {
      toast(e.message, 'error');
    }
  }}, 'Stop the server (STOP)…');

  const el = h('section', {class: 'view', 'aria-labelledby': 'server-h'},
    h('h1', {id: 'server-h'}, 'Server'),
    h('div', {class: 'cards'},
      h('section', {class: 'card', 'aria-labelledby': 'general-h'}, h('h2', {id: 'general-h'}, 'General'), general),
      h('section', {class: 'card', 'aria-labelledby': 'journal-h'}, h('h2', {id: 'journal-h'}, 'Journal'), journal)),
    h('section', {'aria-labelledby': 'config-h'}, h('h2', {id: 'config-h'}, 'Configuration'),
      h('div', {class: 'controls'}, h('div', {class: 'field grow'}, h('label', {for: 'config-filter'}, 'Filter'), configFilter)),
      h('div', {class: 'table-wrap'}, h('table', {class: 'config', id: 'config-table'},
        h('caption', {class: 'sr-only'}, 'Effective configuration'),
        h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Key'), h('th', {scope: 'col'}, 'Value'))), config))),
    h('section', {'aria-labelledby': 'danger-h'}, h('h2', {id: 'danger-h'}, 'Stop'), h('p', {}, stop)));
  return {el, poll, title: 'Server'};
}
