/* SPDX-License-Identifier: Apache-2.0 */
// cluster.js - the replicas, as the node that serves this page sees them (polled with
// CLUSTER instead of STATUS while this view is open; CLUSTER is never forwarded, so it
// answers while there is no leader): this node's role, the leader and since when, the
// term and indexes, and each node with its URL, role, lag and health (up or unreachable,
// as the leader sees it, and how long ago it was heard from where this node knows), the
// leader's row and this node's marked. Its tab shows only on a cluster node (api.js's clusterSeen).
import {get, clusterSeen} from './api.js';
import {h, fill, fmtInt, fmtDuration} from './util.js';

// A node's role as CLUSTER names it; "?" is a node this one knows nothing of (only the
// leader hears from every follower).
const ROLE_TEXT = {'?': '—'};
const ROLE_TITLE = {'?': 'Not known here: only the leader hears from every follower'};

// A node's health as a cell: the leader's verdict, and how long ago the node was heard
// from where this node knows it (the leader: every node; a follower: its leader).
function healthText(n) {
  if (!n.health) return '—';
  const heard = n.heard_ms_ago === null || n.heard_ms_ago === undefined ? ''
    : `, heard ${fmtDuration(n.heard_ms_ago / 1000)} ago`;
  return n.health === 'unreachable' && n.health_since
    ? `unreachable for ${fmtDuration((Date.now() - Date.parse(n.health_since)) / 1000)}${heard}`
    : `${n.health}${heard}`;
}

// Links only to http(s) URLs: the URLs are the configuration's, shown as text anyway.
function safeUrl(u) {
  return /^https?:\/\//i.test(u) ? u : null;
}

export function clusterView() {
  const figs = {};
  const stat = (key, label, wide) => h('div', {class: wide ? 'stat wide' : 'stat'},
    figs[`${key}-dt`] = h('dt', {}, label), figs[key] = h('dd', {id: `cluster-${key}`}, '—'));
  const stats = h('dl', {class: 'stats'}, stat('self', 'This node'), stat('role', 'Its role'),
    stat('leader', 'Leader'), stat('since', 'Leader since', true), stat('term', 'Term'),
    stat('commit', 'Commit index'), stat('applied', 'Applied index'),
    stat('changes', 'Leader changes'));
  const summary = h('p', {class: 'muted', id: 'cluster-summary', 'aria-live': 'polite'});
  const notice = h('p', {class: 'notice', id: 'cluster-notice', hidden: true});

  const tbody = h('tbody', {id: 'cluster-body'});
  const table = h('table', {class: 'lists nodes', id: 'cluster-table'},
    h('caption', {class: 'sr-only'}, 'The nodes of the cluster, with their roles and lag'),
    h('thead', {}, h('tr', {},
      h('th', {scope: 'col'}, 'Node'),
      h('th', {scope: 'col'}, 'URL'),
      h('th', {scope: 'col'}, 'Role'),
      h('th', {scope: 'col', class: 'num'}, 'Match index'),
      h('th', {scope: 'col', class: 'num'}, 'Lag (entries)'),
      h('th', {scope: 'col'}, 'Health'))),
    tbody);
  const wrap = h('div', {class: 'table-wrap'}, table);

  // Row elements by node id, made once and refilled, so a link keeps its focus.
  const rows = new Map();
  function row(id) {
    let r = rows.get(id);
    if (r) return r;
    const th = h('th', {scope: 'row', class: 'name'});
    const link = h('a', {});
    const url = h('td', {class: 'url', 'data-label': 'URL'}, link);
    const role = h('td', {'data-label': 'Role'});
    const match = h('td', {class: 'num', 'data-label': 'Match index'});
    const lag = h('td', {class: 'num', 'data-label': 'Lag (entries)'});
    const health = h('td', {class: 'health', 'data-label': 'Health'});
    r = {tr: h('tr', {'data-node': id}, th, url, role, match, lag, health),
      th, link, role, match, lag, health};
    rows.set(id, r);
    return r;
  }

  let c = null;             // the last CLUSTER answer
  let alone = null;         // CLUSTER's KO when this stsd runs alone

  function update() {
    notice.hidden = !alone && !(c && c.leader === null);
    if (alone) {
      notice.textContent = `This stsd runs alone: ${alone}`;
      summary.textContent = '';
      wrap.hidden = true;
      stats.hidden = true;
      return;
    }
    wrap.hidden = false;
    stats.hidden = false;
    if (!c) return;
    const nodes = c.nodes || [];
    const leader = c.leader === null ? null : nodes.find((n) => n.id === c.leader);
    figs.self.textContent = `node ${c.self}`;
    figs.role.textContent = c.role === 'leader' && !c.serving ? 'leader (loading)' : c.role;
    figs.leader.textContent = c.leader === null ? 'none' : `node ${c.leader}`;
    figs.leader.classList.toggle('bad', c.leader === null);
    figs['since-dt'].textContent = c.leader === null ? 'No leader since' : 'Leader since';
    const ago = fmtDuration(Date.now() / 1000 - c.leader_since);
    figs.since.textContent = c.leader_since > 0
      ? `${new Date(c.leader_since * 1000).toLocaleTimeString()} (${ago})` : '—';
    figs.term.textContent = fmtInt(c.term);
    figs.commit.textContent = fmtInt(c.commit_index);
    figs.applied.textContent = fmtInt(c.applied_index);
    figs.changes.textContent = fmtInt(c.leader_changes);
    summary.textContent = `${fmtInt(nodes.length)} node${nodes.length === 1 ? '' : 's'}, `
      + (leader ? `node ${leader.id} leads` : 'no leader');
    if (c.leader === null) {
      notice.textContent = 'No leader: an election is running. '
        + 'Commands get 503 until one is elected.';
    }

    const seen = new Set();
    nodes.forEach((n, i) => {
      const r = row(n.id);
      seen.add(n.id);
      const isLeader = n.id === c.leader;
      const isSelf = n.id === c.self;
      fill(r.th, String(n.id),
        isLeader ? [' ', h('span', {class: 'badge leader'}, 'leader')] : null,
        isSelf ? [' ', h('span', {class: 'badge self'}, 'this node')] : null);
      if (r.link.textContent !== n.url) {
        r.link.textContent = n.url;
        const u = safeUrl(n.url);
        // The same view on that node: its own picture of the cluster.
        if (u) r.link.href = `${u.replace(/\/+$/, '')}/ui/#/cluster`;
        else r.link.removeAttribute('href');
      }
      const role = ROLE_TEXT[n.role] || n.role;
      if (r.role.textContent !== role) r.role.textContent = role;
      if (ROLE_TITLE[n.role]) r.role.title = ROLE_TITLE[n.role];
      else r.role.removeAttribute('title');
      r.match.textContent = fmtInt(n.match_index);
      r.lag.textContent = fmtInt(n.lag);
      r.lag.classList.toggle('bad', n.lag > 0);
      r.health.textContent = healthText(n);
      r.health.classList.toggle('bad', n.health === 'unreachable');
      r.health.title = n.health_since
        ? `${n.health} since ${new Date(n.health_since).toLocaleTimeString()}, as the leader saw it`
        : '';
      r.tr.classList.toggle('leader', isLeader);
      r.tr.classList.toggle('self', isSelf);
      if (isSelf) r.tr.setAttribute('aria-current', 'true');
      else r.tr.removeAttribute('aria-current');
      if (tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
    });
    for (const [id, r] of rows) {
      if (!seen.has(id)) { r.tr.remove(); rows.delete(id); }
    }
  }

  async function poll() {
    try {
      c = await get('CLUSTER');
      alone = null;
      clusterSeen.node = true;
    } catch (e) {
      // A lone stsd answers 400 "No cluster": nothing to watch, and no error either.
      if (e.status !== 400 || !/cluster/i.test(e.message)) throw e;
      c = null;
      alone = e.message;
      clusterSeen.node = false;
    }
    update();
  }

  const el = h('section', {class: 'view', 'aria-labelledby': 'cluster-h'},
    h('div', {class: 'view-head'}, h('h1', {id: 'cluster-h'}, 'Cluster'), summary),
    notice, stats, wrap,
    h('p', {class: 'muted'}, 'As this node sees it. Only the leader knows how far each '
      + 'follower lags; every node shows the leader\'s verdict of which nodes answer '
      + '(unreachable: nothing heard for three election timeouts).'));
  return {el, poll, update, title: 'Cluster'};
}
