/* SPDX-License-Identifier: Apache-2.0 */
// api.js - the JSON API: GET for reads, POST with the X-STS-UI header for writes, and a
// bearer token asked for on 401 and kept in sessionStorage (this tab only).
import {tokenDialog} from './util.js';

const TOKEN_KEY = 'stsd.token';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// Whether this stsd is a cluster node: a node heads its answers with X-STS-Leader (the
// leader's id, 0 while none is known), which a lone stsd never sends. So the dashboard
// learns it from the answers it asks for anyway, with no request of its own (and no
// CLUSTER's 400 in the console of a lone stsd). The Cluster view sets it from CLUSTER too.
export const clusterSeen = {node: false};

// One token prompt at a time, however many requests got their 401 together; once the
// user cancels, no prompt until they ask for one (allowTokenPrompt), so polling does not
// reopen it every second.
let asking = null;
let declined = false;
function askToken(why) {
  if (declined && why !== 'admin') return Promise.resolve(null);
  if (!asking) {
    asking = tokenDialog(why).then((t) => {
      if (t === null && why !== 'admin') declined = true;
      return t;
    }).finally(() => { asking = null; });
  }
  return asking;
}

export function allowTokenPrompt() {
  declined = false;
}

function token() {
  try { return sessionStorage.getItem(TOKEN_KEY); } catch { return null; }
}

// The message of an answer: JSON's "error", or the text of an STS KO page (the access
// rules answer 401/403 with one).
function koMessage(text, status, cmd) {
  try {
    const data = JSON.parse(text);
    if (data && data.error) return data.error;
  } catch { /* not JSON */ }
  const m = /<body>(?:Error : )?([^<]*)<\/body>/.exec(text);
  return m ? m[1] : `HTTP ${status} from ${cmd}`;
}

async function call(method, cmd, params, form) {
  for (let attempt = 0; attempt < 4; attempt++) {
    // FORMAT=JSON asks for JSON; Accept would not for the reference's commands.
    const headers = {};
    const tok = token();
    if (tok) headers.Authorization = `Bearer ${tok}`;
    const init = {method, headers, cache: 'no-store', credentials: 'same-origin'};
    let url = `/sts/${cmd}?FORMAT=JSON`;
    if (method === 'GET') {
      const q = new URLSearchParams(params).toString();
      if (q) url += `&${q}`;
    } else {
      headers['X-STS-UI'] = '1';
      init.body = form || new URLSearchParams(params);
    }
    const res = await fetch(url, init);
    if (res.headers.has('X-STS-Leader')) clusterSeen.node = true;
    const text = await res.text();
    let data = null;
    try { data = JSON.parse(text); } catch { /* a KO page, below */ }
    if (data && data.ok) return data;
    const message = koMessage(text, res.status, cmd);
    // 401: no token or a wrong one; 403 for an admin command: the admin token is needed.
    const admin = res.status === 403 && /admin token/i.test(message);
    if (res.status === 401 || admin) {
      const t = await askToken(admin ? 'admin' : tok ? 'wrong' : 'needed');
      if (t === null) throw new ApiError(res.status, message);
      try { sessionStorage.setItem(TOKEN_KEY, t); } catch { /* private mode: retry once */ }
      continue;
    }
    throw new ApiError(res.status, message);
  }
  throw new ApiError(401, 'A token is needed');
}

export const get = (cmd, params = {}) => call('GET', cmd, params, null);
export const post = (cmd, params = {}) => call('POST', cmd, params, null);
// form: a FormData (multipart), for LOAD's file.
export const upload = (cmd, form) => call('POST', cmd, null, form);
