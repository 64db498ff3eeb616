// The networks page: the digits demo, compiling an uploaded file,
// deploying and deleting the caller's networks, and running them.

import { api, showError, listModels, listDeployments, devicesOf, isOwnModel, h, fmt, enc } from './api.js';
import { Pad, drawGrid } from './digits.js';
import { drawEvents, drawTraces } from './raster.js';

const $ = (id) => document.getElementById(id);
const DIGITS = 'neuro-1-digits';
let pad;
let models = [], deps = [];
let polling = 0;

export async function enter() {
  pad ??= new Pad($('digit-canvas'), $('digit-cursor'), (p) => drawGrid($('digit-preview'), p.pixels()));
  await refresh();
}

export function leave() { clearTimeout(polling); polling = 0; }

async function refresh() {
  try {
    [models, deps] = await Promise.all([listModels(), listDeployments()]);
    showError($('mynets-error'), null);
  } catch (err) {
    showError($('mynets-error'), err);
    return;
  }
  const devices = devicesOf(models, deps);
  for (const sel of document.querySelectorAll('#page-networks .device-select')) fillSelect(sel, devices.map((d) => [d, d]));
  fillSelect($('digit-device'), deps.filter((d) => d.model === DIGITS).map((d) =>
    [d.id, `${d.device?.name || d.id}${d.status === 'ready' ? '' : ' (' + d.status + ')'}`]));
  $('digit-run').disabled = !$('digit-device').options.length;
  if ($('digit-run').disabled) showError($('digit-error'), new Error(`The digits classifier (${DIGITS}) is not deployed on this server.`));
  const langModels = new Set(models.filter((m) => m.capabilities?.chat).map((m) => m.id));
  fillSelect($('run-deployment'), deps.filter((d) => !langModels.has(d.model)).map((d) =>
    [d.id, `${d.id} (${d.model} on ${d.device?.name}${d.status === 'ready' ? '' : ', ' + d.status})`]));
  renderMine(devices);
  // Keep polling while one of them is still loading.
  clearTimeout(polling);
  if (deps.some((d) => d.status === 'loading')) polling = setTimeout(refresh, 1000);
}

function fillSelect(sel, pairs) {
  const prev = sel.value;
  sel.replaceChildren(...pairs.map(([v, label]) => h('option', { value: v }, label)));
  if (pairs.some(([v]) => v === prev)) sel.value = prev;
}

function renderMine(devices) {
  const tbody = $('mynets').querySelector('tbody');
  const mine = models.filter(isOwnModel);
  if (!mine.length) {
    tbody.replaceChildren(h('tr', {}, h('td', { colspan: 5, class: 'hint' }, 'None yet: compile a file above.')));
    return;
  }
  tbody.replaceChildren(...mine.map((m) => {
    const n = m.neuromorphic || {};
    const devSel = h('select', { 'aria-label': `Device for ${m.id}` }, devices.map((d) => h('option', { value: d, disabled: !(n.devices || []).includes(d) }, d)));
    const onIt = deps.filter((d) => d.model === m.id);
    return h('tr', {},
      h('th', { scope: 'row' }, h('code', {}, m.id), m.description ? h('div', { class: 'hint' }, m.description) : null,
        onIt.length ? h('div', { class: 'hint' }, 'deployed: ', onIt.map((d) => `${d.id} (${d.status})`).join(', ')) : null),
      h('td', {}, fmt(n.neurons)), h('td', {}, fmt(n.synapses)),
      h('td', {}, (n.devices || []).join(', ') || 'none'),
      h('td', { class: 'actions' }, devSel,
        h('button', { type: 'button', onclick: (ev) => deploy(m.id, devSel.value, ev.target, $('mynets-error')) }, 'Deploy'),
        h('button', { type: 'button', class: 'danger', onclick: () => removeModel(m.id) }, 'Delete')));
  }));
}

async function deploy(model, device, btn, errEl) {
  if (btn) btn.disabled = true;
  try {
    const d = await api('POST', '/v1/deployments', { model, device });
    showError(errEl, null);
    await refresh();
    $('run-deployment').value = d.id;
    return d;
  } catch (err) {
    showError(errEl, err);
  } finally {
    if (btn) btn.disabled = false;
  }
}

async function removeModel(id) {
  if (!confirm(`Delete the network ${id}?`)) return;
  try {
    await api('DELETE', `/v1/models/${enc(id)}`);
    showError($('mynets-error'), null);
  } catch (err) {
    showError($('mynets-error'), err);
  }
  await refresh();
}

// The digits demo.

$('digit-clear').addEventListener('click', () => { pad.clear(); $('digit-prediction').textContent = '–'; $('digit-canvas').focus(); });
$('digit-run').addEventListener('click', runDigit);
$('digit-canvas').addEventListener('keydown', (e) => { if (e.key === 'r' || e.key === 'R') runDigit(); });

async function runDigit() {
  const id = $('digit-device').value;
  if (!id) return;
  if (pad.empty()) { showError($('digit-error'), new Error('Draw a digit first.')); return; }
  const inputs = pad.pixels().map((v) => v / 16); // the classifier takes pixel/16, in [0, 1]
  $('digit-run').disabled = true;
  $('digit-prediction').dataset.state = 'running';
  try {
    const res = await api('POST', `/v1/deployments/${enc(id)}/run`, { inputs: [inputs], record: ['spikes', 'membrane'] });
    showError($('digit-error'), null);
    const out = res.outputs[0];
    $('digit-prediction').textContent = String(out.prediction);
    $('digit-counts-title').textContent = out.spikes?.length === 0 && out.spike_counts.some((c) => c < 0)
      ? 'Output values (the readout\'s final membrane)' : 'Output spike counts';
    renderBars($('digit-counts'), out.spike_counts, out.prediction);
    drawOutput($('digit-raster'), out, res.usage);
    $('digit-usage').textContent = usageText(res.usage) + ` · on ${res.deployment || id}` + outputNote(out);
  } catch (err) {
    showError($('digit-error'), err);
    $('digit-prediction').textContent = '–';
  } finally {
    $('digit-run').disabled = false;
    $('digit-prediction').dataset.state = 'done';
  }
}

// drawOutput draws a run's output activity: its spikes, or, for an
// output layer that does not spike (a leaky-integrator readout), its
// membrane over time when recorded.
function drawOutput(canvas, out, usage) {
  const n = out.spike_counts?.length || 0;
  canvas.hidden = !out.spikes?.length && !out.membrane?.length;
  if (out.spikes?.length || !out.membrane?.length) {
    const T = Math.max(Math.round((usage?.timesteps || 0) / Math.max(1, usage?.samples || 1)), ...(out.spikes || []).map(([t]) => t + 1));
    drawEvents(canvas, out.spikes || [], T, n);
  } else {
    drawTraces(canvas, out.membrane);
  }
}

function outputNote(out) {
  if (out.spikes?.length) return '';
  if (out.membrane?.length) return ' · the output layer does not spike: shown is its membrane over time, and the counts are its final values';
  return ' · the output layer does not spike (a leaky-integrator readout): the counts are its final values';
}

function usageText(u) {
  if (!u) return '';
  return [`${fmt(u.timesteps)} timesteps`, `${fmt(u.spikes)} spikes`, `${fmt(u.synaptic_ops)} synaptic ops`,
    `${fmt(u.energy_uj)} µJ`, u.device_ms !== undefined ? `${fmt(u.device_ms)} ms on the device` : null].filter(Boolean).join(' · ');
}

// renderBars draws one bar per output; values below zero (a readout's
// membrane) are drawn from the lowest value up.
function renderBars(el, counts, best) {
  const lo = Math.min(0, ...counts), hi = Math.max(...counts);
  const span = hi > lo ? hi - lo : 1;
  el.replaceChildren(...counts.map((c, i) => {
    const bar = h('span', { class: 'bar' + (i === best ? ' best' : '') });
    bar.style.width = `${Math.max(1, (100 * (c - lo)) / span)}%`;
    return h('div', { class: 'bar-row', title: `output ${i}: ${c}` }, h('span', { class: 'bar-label' }, i), h('span', { class: 'bar-track' }, bar), h('span', { class: 'bar-value' }, fmt(c)));
  }));
}

// Compiling.

const formatOf = (name) => {
  const ext = name.toLowerCase().split('.').pop();
  return { pt: 'pytorch', pth: 'pytorch', onnx: 'onnx', nir: 'nir', h5: 'nir' }[ext] || '';
};

$('compile-file').addEventListener('change', () => {
  const f = $('compile-file').files[0];
  if (!f) return;
  const guess = formatOf(f.name);
  if (guess) $('compile-format').value = guess;
  if (!$('compile-name').value) $('compile-name').placeholder = f.name.replace(/\.[^.]+$/, '');
});

function toBase64(buf) {
  const bytes = new Uint8Array(buf);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

$('compile-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = $('compile-file').files[0];
  const errEl = $('compile-error');
  if (!f) { showError(errEl, new Error('Choose a file.')); return; }
  const format = $('compile-format').value || formatOf(f.name);
  if (!format) { showError(errEl, new Error(`Cannot tell the format of ${f.name}: pick one.`)); return; }
  let options = {};
  const extra = $('compile-options').value.trim();
  if (extra) {
    try { options = JSON.parse(extra); } catch (err) { showError(errEl, new Error(`More options is not valid JSON: ${err.message}`)); return; }
  }
  const ts = parseInt($('compile-timesteps').value, 10), bits = parseInt($('compile-bits').value, 10);
  if (ts) options.timesteps = ts;
  if (bits) options.weight_bits = bits;
  const body = {
    model_format: format, model_file: toBase64(await f.arrayBuffer()),
    name: $('compile-name').value.trim() || f.name.replace(/\.[^.]+$/, ''), target: $('compile-target').value || undefined,
  };
  if (Object.keys(options).length) body.options = options;
  const btn = $('compile-submit');
  btn.disabled = true;
  btn.textContent = 'Compiling…';
  $('compile-report').replaceChildren();
  try {
    const rep = await api('POST', '/v1/compile', body);
    showError(errEl, null);
    let rec = null;
    try { rec = await api('GET', `/v1/models/${enc(rep.id)}`); } catch { /* the report alone will do */ }
    await refresh();
    renderReport(rep, rec);
  } catch (err) {
    showError(errEl, err);
  } finally {
    btn.disabled = false;
    btn.textContent = 'Compile';
  }
});

function renderReport(rep, rec) {
  const n = rep.network || {}, t = rep.target || {}, e = rep.estimates || {};
  const fits = rec?.neuromorphic?.devices || [];
  const devices = devicesOf(models, deps);
  const row = (k, v) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, v));
  const devSel = h('select', { 'aria-label': 'Device' }, devices.map((d) => h('option', { value: d, disabled: !fits.includes(d) && fits.length > 0 }, d)));
  if (fits.length) devSel.value = fits[0];
  const status = h('span', { class: 'hint', 'aria-live': 'polite' });
  $('compile-report').replaceChildren(
    h('h3', {}, `Compiled ${rep.name || rep.id}`, ' ', h('code', {}, rep.id)),
    h('div', { class: 'report' },
      h('table', { class: 'kv' }, h('tbody', {},
        row('Source', `${rep.source?.format}, ${fmt(rep.source?.bytes)} bytes`),
        row('Inputs → outputs', `${n.inputs} → ${n.outputs}`),
        row('Layers', fmt(n.layers)), row('Neurons', fmt(n.neurons)), row('Synapses', fmt(n.synapses)), row('Parameters', fmt(n.parameters)))),
      h('table', { class: 'kv' }, h('tbody', {},
        row('Target', `${t.device}: ${t.fits ? 'fits' : 'does not fit'}, ${t.cores_used} cores, ${fmt(100 * (t.utilisation || 0))}% used`),
        row('Energy per timestep', `${fmt(e.energy_per_timestep_nj)} nJ`),
        row('Latency per timestep', `${fmt(e.latency_per_timestep_us)} µs`),
        row('Fit per device', h('ul', { class: 'fit' }, devices.map((d) =>
          h('li', { class: fits.includes(d) ? 'yes' : 'no' }, `${fits.includes(d) ? '✓' : '✗'} ${d}`))))))),
    rep.warnings?.length ? h('ul', { class: 'warnings' }, rep.warnings.map((w) => h('li', {}, w))) : null,
    h('div', { class: 'row' }, h('label', {}, 'Deploy on ', devSel),
      h('button', { type: 'button', onclick: async (ev) => {
        const d = await deploy(rep.id, devSel.value, ev.target, $('compile-error'));
        if (d) {
          status.textContent = `Deployment ${d.id} is ${d.status}. Run it below.`;
          if (n.inputs && !$('run-inputs').value) $('run-inputs').value = JSON.stringify([new Array(n.inputs).fill(0.5)]);
          $('run-form').scrollIntoView({ block: 'nearest' });
        }
      } }, 'Deploy'), status));
}

// Running.

$('run-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const errEl = $('run-error');
  const id = $('run-deployment').value;
  if (!id) { showError(errEl, new Error('Deploy a network first.')); return; }
  let inputs;
  try { inputs = JSON.parse($('run-inputs').value); } catch (err) { showError(errEl, new Error(`Inputs are not valid JSON: ${err.message}`)); return; }
  const body = { inputs };
  const ts = parseInt($('run-timesteps').value, 10);
  if (ts) body.timesteps = ts;
  if ($('run-record').checked) body.record = ['spikes'];
  try {
    const res = await api('POST', `/v1/deployments/${enc(id)}/run`, body);
    showError(errEl, null);
    $('run-result').replaceChildren(
      h('p', { class: 'hint' }, usageText(res.usage)),
      h('div', { class: 'table-wrap' }, h('table', { class: 'data' },
        h('thead', {}, h('tr', {}, h('th', {}, 'Sample'), h('th', {}, 'Prediction'), h('th', {}, 'Output spike counts'))),
        h('tbody', {}, res.outputs.map((o) => h('tr', {}, h('td', {}, o.index), h('td', {}, h('strong', {}, o.prediction)),
          h('td', {}, h('code', {}, (o.spike_counts || []).map((c) => fmt(c)).join(' ')))))))));
    const o = res.outputs[0];
    if (o?.spikes || o?.membrane) {
      const c = h('canvas', { class: 'small-raster', role: 'img', 'aria-label': 'Output activity of sample 0' });
      $('run-result').append(c, h('p', { class: 'hint' }, outputNote(o).replace(/^ · /, '')));
      drawOutput(c, o, res.usage);
    }
  } catch (err) {
    showError(errEl, err);
  }
});
