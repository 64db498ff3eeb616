// The telemetry page. The API gives a summary of a window, not a series,
// so the console builds the series itself: it polls /v1/telemetry while
// it is open (faster while this page shows) and charts each summary
// against the time it was taken.

import { api, showError, fmt } from './api.js';

const $ = (id) => document.getElementById(id);
const MAX_POINTS = 1800;
let series = { t: [], p50: [], p95: [], p99: [], ttft50: [], ttft95: [], tps: [], spikes: [], energy: [], requests: [] };
let charts = [];
let timer = 0, visible = false, running = false, last = null, gen = 0;

const specs = [
  { title: 'Latency (ms)', keys: [['p50', 'p50'], ['p95', 'p95'], ['p99', 'p99']] },
  { title: 'Time to first token (ms)', keys: [['ttft50', 'p50'], ['ttft95', 'p95']] },
  { title: 'Tokens per second', keys: [['tps', 'tokens/s']] },
  { title: 'Spikes and energy in the window', keys: [['spikes', 'spikes'], ['energy', 'energy µJ', 'y2']] },
];
const colors = ['#4f8cff', '#f5a524', '#f31260'];

// collect starts the background polling (every 10 s when the page is
// not shown) if it is not running.
export function collect() {
  if (running) return;
  running = true;
  tick();
}

export function stop() { running = false; clearTimeout(timer); }

export function enter() {
  visible = true;
  if (!charts.length) build();
  render();
  clearTimeout(timer);
  running = true;
  tick();
}

export function leave() { visible = false; }

function interval() {
  const every = parseInt($('telemetry-every').value, 10);
  if (!visible) return 10000;
  return every || 0;
}

async function tick() {
  clearTimeout(timer);
  if (!running) return;
  const my = ++gen; // a tick started later supersedes this one
  const w = $('telemetry-window').value;
  try {
    const s = await api('GET', '/v1/telemetry' + (w ? `?window=${encodeURIComponent(w)}` : ''));
    if (my !== gen) return;
    push(s);
    showError($('telemetry-error'), null);
  } catch (err) {
    if (my !== gen) return;
    showError($('telemetry-error'), err);
  }
  const ms = interval();
  if (running && ms) timer = setTimeout(tick, ms);
}

function push(s) {
  last = s;
  const n = s.neuromorphic || {};
  const row = {
    t: Date.now() / 1000, p50: s.latency_ms?.p50, p95: s.latency_ms?.p95, p99: s.latency_ms?.p99,
    ttft50: s.time_to_first_token_ms?.p50, ttft95: s.time_to_first_token_ms?.p95, tps: s.tokens?.per_second,
    spikes: n.spikes, energy: n.energy_estimate_uj, requests: s.requests?.total,
  };
  for (const k of Object.keys(series)) {
    series[k].push(row[k] ?? null);
    if (series[k].length > MAX_POINTS) series[k].shift();
  }
  if (visible) render();
}

const ticks = (u, vals) => vals.map((v) => fmt(v));

function build() {
  const root = $('telemetry-chart');
  if (!window.uPlot) { root.textContent = 'The chart library did not load.'; return; }
  charts = specs.map((sp) => {
    const box = document.createElement('figure');
    box.className = 'card chart';
    const cap = document.createElement('figcaption');
    cap.textContent = sp.title;
    const holder = document.createElement('div');
    box.append(cap, holder);
    root.append(box);
    const hasY2 = sp.keys.some((k) => k[2]);
    const opts = {
      width: Math.max(200, holder.clientWidth || 400), height: 180,
      series: [{}, ...sp.keys.map(([, label, scale], i) => ({ label, stroke: colors[i], width: 2, scale: scale || 'y', spanGaps: true }))],
      axes: [{ stroke: '#8892a6' }, { stroke: '#8892a6', scale: 'y', size: 56, values: ticks },
        ...(hasY2 ? [{ stroke: colors[1], scale: 'y2', side: 1, size: 56, grid: { show: false }, values: ticks }] : [])],
      // At least a minute across, so that the first samples do not
      // stretch the time axis over years.
      scales: { x: { time: true, range: (u, lo, hi) => (hi - lo < 60 ? [hi - 60, hi] : [lo, hi]) },
        y: { range: (u, lo, hi) => [0, hi > 0 ? hi * 1.1 : 1] }, y2: { range: (u, lo, hi) => [0, hi > 0 ? hi * 1.1 : 1] } },
      legend: { live: false },
    };
    const u = new window.uPlot(opts, [[]].concat(sp.keys.map(() => [])), holder);
    let frame = 0;
    new ResizeObserver(() => {
      // Resizing in the next frame, not in the observer, ends the loop
      // of a size change that the chart itself causes.
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        const width = Math.max(200, holder.clientWidth);
        if (width !== u.width) u.setSize({ width, height: 180 });
      });
    }).observe(holder);
    return { u, sp };
  });
}

function render() {
  const n = series.t.length;
  $('telemetry-chart').dataset.points = n;
  for (const { u, sp } of charts) u.setData([series.t, ...sp.keys.map(([k]) => series[k])]);
  if (!last) return;
  const s = last, ne = s.neuromorphic || {};
  const cards = [
    ['Requests', `${s.requests?.total ?? 0}`, `${s.requests?.errors ?? 0} ${s.requests?.errors === 1 ? 'error' : 'errors'}`],
    ['Latency p50 / p95 / p99', `${fmt(s.latency_ms?.p50)} / ${fmt(s.latency_ms?.p95)} / ${fmt(s.latency_ms?.p99)} ms`, `mean ${fmt(s.latency_ms?.mean)} ms`],
    ['Time to first token', `${fmt(s.time_to_first_token_ms?.p50)} ms`, `p95 ${fmt(s.time_to_first_token_ms?.p95)} ms`],
    ['Tokens', `${fmt(s.tokens?.per_second)} /s`, `${fmt(s.tokens?.prompt)} prompt, ${fmt(s.tokens?.completion)} generated`],
    ['Spikes', fmt(ne.spikes), `${fmt(ne.timesteps)} timesteps, rate ${fmt(ne.spike_rate)}`],
    ['Energy (estimate)', `${fmt(ne.energy_estimate_uj)} µJ`, `${fmt(ne.synaptic_ops)} synaptic ops`],
  ];
  $('telemetry-cards').replaceChildren(...cards.map(([k, v, sub]) => {
    const d = document.createElement('div');
    const dt = document.createElement('dt');
    const dd = document.createElement('dd');
    const small = document.createElement('span');
    dt.textContent = k;
    dd.textContent = v;
    small.className = 'hint';
    small.textContent = sub;
    dd.append(document.createElement('br'), small);
    d.append(dt, dd);
    return d;
  }));
  $('telemetry-updated').textContent = `updated ${new Date().toLocaleTimeString()}` + (s.truncated ? ' (window reaches past the oldest record kept)' : '');
}

$('telemetry-window').addEventListener('change', () => {
  // A different window is a different series: start it afresh.
  for (const k of Object.keys(series)) series[k] = [];
  tick();
});
$('telemetry-every').addEventListener('change', tick);
