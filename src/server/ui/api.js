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

// One token prompt at a time, however many requests got their 401 together; once the
// user cancels, no prompt until they ask for one (allowTokenPrompt), so polling does not
// reopen it every second.
let asking = null;
let declined = false;
function askToken(wrong) {
  if (declined) return Promise.resolve(null);
  if (!asking) {
    asking = tokenDialog(wrong).then((t) => {
      if (t === null) declined = true;
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

async function call(method, cmd, params, form) {
  for (let attempt = 0; attempt < 4; attempt++) {
    const headers = {Accept: 'application/json'};
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
    if (res.status === 401) {
      const t = await askToken(Boolean(tok));
      if (t === null) throw new ApiError(401, 'A token is needed');
      try { sessionStorage.setItem(TOKEN_KEY, t); } catch { /* private mode: retry once */ }
      continue;
    }
    let data = null;
    try { data = await res.json(); } catch { /* not JSON: reported below */ }
    if (!data) throw new ApiError(res.status, `HTTP ${res.status} from ${cmd}`);
    if (!data.ok) throw new ApiError(res.status, data.error || `${cmd} failed`);
    return data;
  }
  throw new ApiError(401, 'A token is needed');
}

export const get = (cmd, params = {}) => call('GET', cmd, params, null);
export const post = (cmd, params = {}) => call('POST', cmd, params, null);
// form: a FormData (multipart), for LOAD's file.
export const upload = (cmd, form) => call('POST', cmd, null, form);
