// The chat page: a streamed answer with the spiking activity of each
// token, and each answer's cost.

import { api, stream, showError, listModels, listDeployments, h, fmt, enc } from './api.js';
import { LayerRaster } from './raster.js';

const $ = (id) => document.getElementById(id);
let raster;
let history = [];
let busy = null; // the AbortController of the answer being streamed
let loaded = false;

export async function enter() {
  raster ??= new LayerRaster($('activity-raster'), $('activity-legend'));
  await loadPicker();
  if (!busy) $('chat-input').focus();
}

async function loadPicker() {
  const sel = $('model-select');
  try {
    const [models, deps] = await Promise.all([listModels(), listDeployments()]);
    const lm = new Set(models.filter((m) => m.capabilities?.chat).map((m) => m.id));
    const prev = sel.value;
    const og1 = h('optgroup', { label: 'Models' }, [...lm].sort().map((id) => h('option', { value: 'model:' + id }, id)));
    const og2 = h('optgroup', { label: 'Deployments' }, deps.filter((d) => lm.has(d.model)).map((d) =>
      h('option', { value: 'deployment:' + d.id, disabled: d.status !== 'ready' },
        `${d.id} (${d.device?.name || '?'}${d.status !== 'ready' ? ', ' + d.status : ''})`)));
    sel.replaceChildren(og1, og2);
    const values = [...sel.options].map((o) => o.value);
    sel.value = values.includes(prev) ? prev : values.includes('model:neuro-1-lite') ? 'model:neuro-1-lite' : values[0] || '';
    loaded = true;
    showError($('chat-error'), null);
  } catch (err) {
    showError($('chat-error'), err);
  }
}

function addMessage(role, text) {
  $('chat-output').querySelector('.empty')?.remove();
  const body = h('div', { class: 'text' }, text);
  const msg = h('div', { class: 'msg ' + role }, h('div', { class: 'who' }, role === 'user' ? 'You' : 'Neuro'), body);
  $('chat-output').append(msg);
  msg.scrollIntoView({ block: 'end' });
  return { msg, body };
}

// neuroCost reads the neuromorphic part of a usage object, whichever of
// the shapes the server uses (flat, or under "neuromorphic").
function neuroCost(u) {
  if (!u) return null;
  const n = u.neuromorphic || u.neuro || u;
  const ts = n.timesteps;
  if (ts === undefined) return null;
  return { timesteps: ts, spikes: n.spikes, energy: n.energy_uj ?? n.energy_estimate_uj };
}

async function telemetryTotals() {
  try { return (await api('GET', '/v1/telemetry')).neuromorphic; } catch { return null; }
}

async function send() {
  const text = $('chat-input').value.trim();
  if (!text || busy) return;
  if (!loaded) await loadPicker();
  const [kind, ...rest] = $('model-select').value.split(':');
  const id = rest.join(':');
  if (!id) { showError($('chat-error'), new Error('Pick a model or a deployment first.')); return; }
  showError($('chat-error'), null);
  history.push({ role: 'user', content: text });
  addMessage('user', text);
  $('chat-input').value = '';
  const { msg, body } = addMessage('assistant', '');
  body.classList.add('streaming');
  raster.reset();

  const temperature = parseFloat($('chat-temperature').value);
  const maxTokens = parseInt($('chat-max-tokens').value, 10);
  const req = {
    messages: history, stream: true, stream_options: { include_usage: true }, neuro: { activity: true },
  };
  if (!Number.isNaN(temperature)) req.temperature = temperature;
  if (!Number.isNaN(maxTokens)) req.max_tokens = maxTokens;
  const path = kind === 'deployment' ? `/v1/deployments/${enc(id)}/chat/completions` : '/v1/chat/completions';
  if (kind === 'model') req.model = id;

  busy = new AbortController();
  $('chat-send').textContent = 'Stop';
  $('chat-send').setAttribute('aria-label', 'Stop the answer');
  const before = telemetryTotals();
  const t0 = performance.now();
  let answer = '', usage = null, finish = null, ttft = null, tokens = 0;
  try {
    for await (const chunk of stream(path, req, { signal: busy.signal })) {
      const ch = chunk.choices?.[0];
      const delta = ch?.delta?.content;
      const activity = chunk.neuro?.activity ?? ch?.neuro?.activity ?? ch?.delta?.neuro?.activity;
      if (delta) {
        ttft ??= performance.now() - t0;
        answer += delta;
        body.textContent = answer;
        tokens++;
      }
      if (activity) raster.push(activity, delta);
      if (ch?.finish_reason) finish = ch.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    history.push({ role: 'assistant', content: answer });
  } catch (err) {
    if (err.name === 'AbortError') { finish = 'stopped'; history.push({ role: 'assistant', content: answer }); }
    else { history.pop(); showError($('chat-error'), err); msg.classList.add('failed'); }
  } finally {
    busy = null;
    body.classList.remove('streaming');
    $('chat-send').textContent = 'Send';
    $('chat-send').removeAttribute('aria-label');
  }
  const secs = (performance.now() - t0) / 1000;
  let cost = neuroCost(usage), approx = false;
  if (!cost) {
    // The usage in the stream has no neuromorphic figures: take them
    // from the difference of the caller's telemetry before and after.
    const b = await before;
    for (let i = 0; i < 5 && b; i++) {
      const a = await telemetryTotals();
      if (a && a.timesteps > b.timesteps) {
        cost = { timesteps: a.timesteps - b.timesteps, spikes: a.spikes - b.spikes, energy: a.energy_estimate_uj - b.energy_estimate_uj };
        approx = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  const parts = [];
  if (usage) parts.push(`${usage.total_tokens} tokens (${usage.prompt_tokens} prompt + ${usage.completion_tokens} answer)`);
  else parts.push(`${tokens} tokens streamed`);
  if (cost) {
    parts.push(`${fmt(cost.timesteps)} timesteps`, `${fmt(cost.spikes)} spikes`, `${fmt(cost.energy)} µJ`);
  }
  if (ttft !== null) parts.push(`first token ${fmt(ttft)} ms`);
  parts.push(`${secs.toFixed(2)} s`);
  if (finish) parts.push(finish === 'length' ? 'stopped at max tokens' : finish === 'stopped' ? 'stopped by you' : `finish: ${finish}`);
  msg.append(h('div', { class: 'cost', 'data-testid': 'chat-cost', title: approx ? 'neuromorphic figures from /v1/telemetry' : null },
    (approx ? '≈ ' : '') + parts.join(' · ')));
  if (!document.activeElement || document.activeElement === document.body) $('chat-input').focus();
}

$('chat-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  if (busy) busy.abort(); else send();
});
$('chat-input').addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); send(); }
});
$('chat-new').addEventListener('click', () => {
  busy?.abort();
  history = [];
  $('chat-output').replaceChildren(h('p', { class: 'empty hint' }, 'New conversation.'));
  raster?.reset();
  $('chat-input').focus();
});

