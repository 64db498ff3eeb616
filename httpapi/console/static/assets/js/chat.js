// The chat page: a streamed answer with the spiking activity of each
// token, and each answer's cost. A conversation goes through the
// Responses API, each turn continuing from the server's stored state of
// the one before.

import { api, responseEvents, showError, listModels, listDeployments, h, fmt, ApiError } from './api.js';
import { LayerRaster } from './raster.js';

const $ = (id) => document.getElementById(id);
let raster;
let history = []; // the conversation as shown: [{role, content}]
// conv is where the server's copy of the conversation stands: the id of
// its last stored response and the picker's value it was made with.
let conv = { last: null, model: null };
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

// request builds the body of one turn. A conversation continues from the
// server's stored state of its last answer (previous_response_id), so only
// the new message is sent; without one (the first turn, another model, a
// stopped answer, an expired state) the whole visible conversation is.
function request(c, shown, picked, model, text) {
  const req = { model, store: true, stream: true, neuro: { activity: true } };
  const instructions = $('chat-instructions').value.trim();
  if (instructions) req.instructions = instructions; // the server keeps it for one turn only: sent every turn
  if (c.last && c.model === picked) {
    req.previous_response_id = c.last;
    req.input = text;
  } else {
    req.input = shown.length ? [...shown, { role: 'user', content: text }] : text;
  }
  const temperature = parseFloat($('chat-temperature').value);
  const maxTokens = parseInt($('chat-max-tokens').value, 10);
  if (!Number.isNaN(temperature)) req.temperature = temperature;
  if (!Number.isNaN(maxTokens)) req.max_output_tokens = maxTokens;
  return req;
}

async function send() {
  const text = $('chat-input').value.trim();
  if (!text || busy) return;
  if (!loaded) await loadPicker();
  const picked = $('model-select').value;
  const id = picked.split(':').slice(1).join(':'); // a model or a deployment: the Responses API takes either as model
  if (!id) { showError($('chat-error'), new Error('Pick a model or a deployment first.')); return; }
  showError($('chat-error'), null);
  // This turn's conversation: New chat replaces both while it streams.
  const c = conv, shown = history;
  addMessage('user', text);
  $('chat-input').value = '';
  const { msg, body } = addMessage('assistant', '');
  body.classList.add('streaming');
  raster.reset();

  busy = new AbortController();
  $('chat-send').textContent = 'Stop';
  $('chat-send').setAttribute('aria-label', 'Stop the answer');
  const before = telemetryTotals();
  const t0 = performance.now();
  let answer = '', resp = null, finish = null, ttft = null, tokens = 0;
  try {
    for (let req = request(c, shown, picked, id, text); ; req = request(c, shown, picked, id, text)) {
      try {
        for await (const ev of responseEvents(req, { signal: busy.signal })) {
          if (ev.type === 'response.output_text.delta') {
            if (ev.delta) {
              ttft ??= performance.now() - t0;
              answer += ev.delta;
              body.textContent = answer;
              tokens++;
            }
            if (ev.neuro?.activity) raster.push(ev.neuro.activity, ev.delta);
          } else if (ev.type === 'response.completed' || ev.type === 'response.incomplete') {
            resp = ev.response;
          }
        }
        break;
      } catch (err) {
        // The stored state is gone (expired or deleted): start over
        // with the whole conversation.
        if (!(err instanceof ApiError && err.status === 404 && err.param === 'previous_response_id')) throw err;
        c.last = null;
      }
    }
    if (resp?.status === 'incomplete') finish = 'length';
    shown.push({ role: 'user', content: text }, { role: 'assistant', content: answer });
    c.last = resp?.store ? resp.id : null;
    if (resp?.id) msg.dataset.responseId = resp.id;
    c.model = picked;
  } catch (err) {
    if (err.name === 'AbortError') {
      // The server keeps nothing of a stopped answer: the next turn
      // sends the conversation as it reads here.
      finish = 'stopped';
      shown.push({ role: 'user', content: text }, { role: 'assistant', content: answer });
      c.last = null;
    } else { showError($('chat-error'), err); msg.classList.add('failed'); }
  } finally {
    busy = null;
    body.classList.remove('streaming');
    $('chat-send').textContent = 'Send';
    $('chat-send').removeAttribute('aria-label');
  }
  const secs = (performance.now() - t0) / 1000;
  const usage = resp?.usage;
  let cost = neuroCost(resp), approx = false;
  if (!cost) {
    // The response has no neuromorphic figures: take them from the
    // difference of the caller's telemetry before and after.
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
  if (usage) {
    parts.push(`${usage.total_tokens} tokens (${usage.input_tokens} prompt + ${usage.output_tokens} answer)`);
    parts.push(`resumed ${usage.input_tokens_details?.cached_tokens ?? 0} of ${usage.input_tokens} tokens`);
  } else parts.push(`${tokens} tokens streamed`);
  if (cost) {
    parts.push(`${fmt(cost.timesteps)} timesteps`, `${fmt(cost.spikes)} spikes`, `${fmt(cost.energy)} µJ`);
  }
  if (ttft !== null) parts.push(`first token ${fmt(ttft)} ms`);
  parts.push(`${secs.toFixed(2)} s`);
  if (finish) parts.push(finish === 'length' ? 'stopped at max tokens' : 'stopped by you');
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
  conv = { last: null, model: null };
  $('chat-output').replaceChildren(h('p', { class: 'empty hint' }, 'New conversation.'));
  raster?.reset();
  $('chat-input').focus();
});

