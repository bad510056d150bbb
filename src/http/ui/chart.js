/* SPDX-License-Identifier: Apache-2.0 */
// chart.js - SVG sparklines and small line charts over the last 5 minutes.
import {h} from './util.js';
import {eachSample, WINDOW_MS} from './state.js';

// The time the x axis starts at: 5 minutes ago, or the first sample when the page has
// watched for less (so a young chart uses the whole width).
function start(now) {
  let first = now;
  eachSample((i, t) => { if (t < first) first = t; });
  return Math.max(now - WINDOW_MS, Math.min(first, now - 10000));
}

// The polyline points of series (a ring buffer) scaled into w x h; '' when empty.
function points(series, w, ht, lo, hi) {
  const now = Date.now();
  const t0 = start(now);
  const span = hi - lo || 1;
  const out = [];
  eachSample((i, t) => {
    const v = series[i];
    if (Number.isNaN(v)) return;
    const x = ((t - t0) / (now - t0)) * w;
    const y = ht - 2 - ((v - lo) / span) * (ht - 4);
    out.push(`${x.toFixed(1)},${y.toFixed(1)}`);
  });
  return out.join(' ');
}

function range(seriesList, zeroBased) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of seriesList) {
    eachSample((i) => {
      const v = s[i];
      if (Number.isNaN(v)) return;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    });
  }
  if (lo === Infinity) return [0, 1];
  if (zeroBased) lo = Math.min(0, lo);
  if (hi === lo) hi = lo + 1;
  return [lo, hi];
}

const SPARK_W = 100;
const SPARK_H = 24;

// A sparkline element; update it with updateSparkline.
export function sparkline() {
  const line = h('svg:polyline', {class: 'spark-line', points: ''});
  return h('svg:svg', {class: 'spark', viewBox: `0 0 ${SPARK_W} ${SPARK_H}`,
    preserveAspectRatio: 'none', 'aria-hidden': 'true', focusable: 'false'}, line);
}

export function updateSparkline(svg, series) {
  const line = svg.firstChild;
  if (!series) { line.setAttribute('points', ''); return; }
  const [lo, hi] = range([series], true);
  line.setAttribute('points', points(series, SPARK_W, SPARK_H, lo, hi));
}

const CHART_W = 600;
const CHART_H = 140;

// A line chart of several series: [{label, cls}]; update with updateChart(el, arrays).
export function chart(title, series) {
  const lines = series.map((s) => h('svg:polyline', {class: `chart-line ${s.cls}`, points: ''}));
  const svg = h('svg:svg', {class: 'chart', viewBox: `0 0 ${CHART_W} ${CHART_H}`,
    preserveAspectRatio: 'none', role: 'img', 'aria-label': title},
  h('svg:line', {x1: 0, y1: CHART_H - 1, x2: CHART_W, y2: CHART_H - 1, class: 'chart-axis'}),
  ...lines);
  const legend = h('p', {class: 'legend'},
    series.map((s) => h('span', {class: `key ${s.cls}`}, s.label)),
    h('span', {class: 'muted'}, ' · up to the last 5 minutes'));
  const max = h('span', {class: 'chart-max'});
  const el = h('figure', {class: 'chart-box'}, h('figcaption', {}, title, ' ', max), svg, legend);
  el._lines = lines;
  el._max = max;
  return el;
}

export function updateChart(el, arrays, fmt) {
  const present = arrays.filter(Boolean);
  const [lo, hi] = range(present, true);
  el._lines.forEach((line, k) => {
    line.setAttribute('points', arrays[k] ? points(arrays[k], CHART_W, CHART_H, lo, hi) : '');
  });
  el._max.textContent = present.length ? `(max ${fmt(hi)})` : '';
}
