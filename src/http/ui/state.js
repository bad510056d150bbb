/* SPDX-License-Identifier: Apache-2.0 */
// state.js - what polling learns: the lists of the last STATUS, and for each list the
// last 5 minutes of lines, in/s and out/s in ring buffers (one sample per poll).
export const HIST = 300;
export const WINDOW_MS = 5 * 60 * 1000;

export const state = {
  lists: [],            // the last STATUS, sorted by name as the server sends it
  byName: new Map(),    // name -> {lines, added, removed} ring buffers
  times: new Float64Array(HIST).fill(NaN),
  tick: 0,              // samples taken; the next one goes to tick % HIST
  updated: 0,           // Date.now() of the last good answer
  error: null,          // the last poll's error message, or null
};

const subscribers = new Set();

export function subscribe(fn) {
  subscribers.add(fn);
  return () => subscribers.delete(fn);
}

export function notify() {
  for (const fn of subscribers) fn();
}

function ring() {
  return new Float32Array(HIST).fill(NaN);
}

// Records one STATUS answer.
export function ingest(lists) {
  const i = state.tick % HIST;
  const now = Date.now();
  state.times[i] = now;
  const byName = new Map();
  for (const l of lists) {
    const e = state.byName.get(l.name) || {lines: ring(), added: ring(), removed: ring()};
    e.lines[i] = l.lines;
    e.added[i] = l.added_per_s;
    e.removed[i] = l.removed_per_s;
    byName.set(l.name, e);
  }
  state.byName = byName;
  state.lists = lists;
  state.tick++;
  state.updated = now;
  state.error = null;
}

// Calls fn(index) for the samples of the last 5 minutes, oldest first.
export function eachSample(fn) {
  const now = Date.now();
  for (let k = 0; k < HIST; k++) {
    const i = (state.tick + k) % HIST;
    const t = state.times[i];
    if (t >= now - WINDOW_MS) fn(i, t);
  }
}

export function findList(name) {
  return state.lists.find((l) => l.name === name) || null;
}
