/* SPDX-License-Identifier: Apache-2.0 */
// util.js - DOM building (text only: never HTML from data), formatting, dialogs, toasts.

// h('tag', {attr: value, onclick: fn}, ...children): strings become text nodes.
export function h(tag, attrs, ...children) {
  const el = tag.startsWith('svg:')
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.setAttribute('class', v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// Replaces the children of el.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

const intFmt = new Intl.NumberFormat('en-US');
export function fmtInt(n) {
  return n === null || n === undefined ? '—' : intFmt.format(n);
}

export function fmtRate(r) {
  if (r === null || r === undefined || Number.isNaN(r)) return '—';
  if (r === 0) return '0';
  if (r < 10) return r.toFixed(1);
  return intFmt.format(Math.round(r));
}

// Seconds as "45 s", "3 min 05 s", "2 h 10 min", "4 d 3 h"; null as "—".
export function fmtDuration(s) {
  if (s === null || s === undefined || !Number.isFinite(s)) return '—';
  s = Math.max(0, Math.round(s));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return `${hr} h ${String(m % 60).padStart(2, '0')} min`;
  return `${Math.floor(hr / 24)} d ${hr % 24} h`;
}

export function fmtBytes(n) {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

export function fmtTime(unixSeconds) {
  return new Date(unixSeconds * 1000).toLocaleString();
}

// A list's display name: the server sends "name" (and "name_base64" when not UTF-8).
export function listName(l) {
  return l.name;
}

// Shows a short message in the live region; kind 'error' styles it as one.
let toastTimer = 0;
export function toast(message, kind = 'ok') {
  const t = document.getElementById('toast');
  t.textContent = message;
  t.className = `toast show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.className = 'toast'; }, kind === 'error' ? 8000 : 4000);
}

// Asks a yes/no question in a modal dialog; resolves true only on the confirm button.
export function confirmDialog(title, text, okLabel) {
  const d = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = okLabel;
  d.returnValue = 'cancel';
  return new Promise((resolve) => {
    d.addEventListener('close', () => resolve(d.returnValue === 'ok'), {once: true});
    d.showModal();
    document.getElementById('confirm-cancel').focus();
  });
}

const TOKEN_TEXT = {
  needed: 'This server asks for a token. It is kept for this tab only.',
  wrong: 'That token was refused. Enter another one (kept for this tab only).',
  admin: 'This needs the admin token. It is kept for this tab only.',
};

// Asks for a token (why: needed, wrong or admin); resolves with it, or null on cancel.
export function tokenDialog(why) {
  const d = document.getElementById('token');
  const input = document.getElementById('token-input');
  document.getElementById('token-text').textContent = TOKEN_TEXT[why] || TOKEN_TEXT.needed;
  input.value = '';
  d.returnValue = 'cancel';
  // Cancel is a plain button, so Enter in the field submits with "Use token".
  document.getElementById('token-cancel').onclick = () => d.close('cancel');
  return new Promise((resolve) => {
    d.addEventListener('close', () => {
      resolve(d.returnValue === 'ok' && input.value ? input.value : null);
    }, {once: true});
    d.showModal();
    input.focus();
  });
}

// A labelled form control: <label for=id>text</label> control.
export function labelled(text, control) {
  return [h('label', {for: control.id}, text), control];
}
