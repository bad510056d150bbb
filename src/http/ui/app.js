/* SPDX-License-Identifier: Apache-2.0 */
// app.js - the dashboard's shell: routes (#/, #/list/NAME, #/keys, #/load, #/barriers,
// #/server, #/cluster), one poll per second while the page is visible (STATUS, or the
// view's own: KEYS, BARRIERS and RUNS, INFO, CLUSTER), the live indicator, and the
// Cluster tab, shown only on a cluster node.
import {get, allowTokenPrompt, clusterSeen} from './api.js';
import {state, ingest, notify} from './state.js';
import {h, fill} from './util.js';
import {listsView} from './lists.js';
import {listView} from './list.js';
import {keysView} from './keys.js';
import {loadView} from './load.js';
import {serverView} from './server.js';
import {barriersView} from './barriers.js';
import {clusterView} from './cluster.js';

const POLL_MS = 1000;
const HIDDEN_POLL_MS = 10000;

let view = null;          // {el, update(), destroy(), poll?: async () => void}
let timer = 0;
let polling = false;
let again = false;        // a poll was asked for while one was in flight

function route() {
  const hash = location.hash || '#/';
  const m = hash.match(/^#\/list\/(.+)$/);
  if (m) {
    let name;
    try { name = decodeURIComponent(m[1]); } catch { name = m[1]; }
    return {id: 'lists', make: () => listView(name)};
  }
  if (hash === '#/keys') return {id: 'keys', make: keysView};
  if (hash === '#/load') return {id: 'load', make: loadView};
  if (hash === '#/server') return {id: 'server', make: serverView};
  if (hash === '#/barriers') return {id: 'barriers', make: barriersView};
  if (hash === '#/cluster') return {id: 'cluster', make: clusterView};
  return {id: 'lists', make: listsView};
}

function show() {
  const r = route();
  if (view && view.destroy) view.destroy();
  view = r.make();
  const main = document.getElementById('main');
  fill(main, view.el);
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.view === r.id) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${view.title} · stsd`;
  if (view.update) view.update();
  pollSoon(0);
}

function setLive() {
  const live = document.getElementById('live');
  if (state.error) {
    const children = [h('span', {class: 'dot bad', 'aria-hidden': 'true'}), ` ${state.error}`];
    if (state.needsToken) {
      children.push(' ', h('button', {type: 'button', class: 'link', onclick: () => {
        allowTokenPrompt();
        pollSoon(0);
      }}, 'Enter token'));
    }
    fill(live, ...children);
    live.className = 'live bad';
  } else if (state.updated) {
    fill(live, h('span', {class: 'dot ok', 'aria-hidden': 'true'}), ' Live');
    live.className = 'live';
    live.title = `Updated ${new Date(state.updated).toLocaleTimeString()}`;
  }
}

// The Cluster tab: hidden on a lone stsd, whose page stays as it always was.
function setClusterTab() {
  const tab = document.querySelector('nav a[data-view="cluster"]');
  if (tab.hidden === clusterSeen.node) tab.hidden = !clusterSeen.node;
}

async function pollOnce() {
  try {
    if (view && view.poll) {
      await view.poll();
      state.updated = Date.now();
      state.error = null;
    } else {
      const data = await get('STATUS');
      ingest(data.lists || []);
    }
    state.needsToken = false;
  } catch (e) {
    state.error = e.message || String(e);
    state.needsToken = e.status === 401;
  }
  setLive();
  setClusterTab();
  notify();
  if (view && view.update) view.update();
}

function pollSoon(ms) {
  clearTimeout(timer);
  timer = setTimeout(loop, ms);
}

async function loop() {
  if (polling) {
    again = true;
    return;
  }
  polling = true;
  again = false;
  const t0 = performance.now();
  await pollOnce();
  polling = false;
  const every = document.hidden ? HIDDEN_POLL_MS : POLL_MS;
  pollSoon(again ? 0 : Math.max(0, every - (performance.now() - t0)));
}

window.addEventListener('hashchange', show);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) pollSoon(0);
});
// Views ask for a fresh poll after a change they made (ADD, RESET, LOAD...).
window.addEventListener('stsd:changed', () => pollSoon(0));
show();
