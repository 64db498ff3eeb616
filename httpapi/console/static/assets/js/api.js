// The API client: Bearer auth from sessionStorage, errors carrying the
// API's own message, and the Responses API's server-sent events read over
// fetch (EventSource cannot send an Authorization header).

const base = (document.querySelector('meta[name="neuro-api-base"]')?.content || '').replace(/\/$/, '');
const KEY = 'neuro.apiKey';

export const apiKey = {
  get: () => sessionStorage.getItem(KEY) || '',
  set: (k) => sessionStorage.setItem(KEY, k),
  clear: () => sessionStorage.removeItem(KEY),
};

// ApiError is an error answer of the API, or a failure to reach it
// (status 0). Its message is the API's message.
export class ApiError extends Error {
  constructor(status, body, fallback) {
    const e = body && body.error;
    super((e && e.message) || fallback || `The server answered ${status}.`);
    this.name = 'ApiError';
    this.status = status;
    this.type = e?.type ?? null;
    this.code = e?.code ?? null;
    this.param = e?.param ?? null;
  }
}

const unauthorized = new Set();
// onUnauthorized registers fn to be called with the error of any 401.
export function onUnauthorized(fn) { unauthorized.add(fn); }

async function send(method, path, body, { signal, key } = {}) {
  const headers = { Authorization: 'Bearer ' + (key ?? apiKey.get()) };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(base + path, {
      method, headers, signal, cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, null, `Cannot reach the server (${err.message}).`);
  }
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    let data = null;
    try { data = JSON.parse(text); } catch { /* not JSON: use the status line */ }
    const err = new ApiError(res.status, data, text.trim().slice(0, 200) || `${res.status} ${res.statusText}`);
    if (res.status === 401 && key === undefined) unauthorized.forEach((fn) => fn(err));
    throw err;
  }
  return res;
}

// api sends a request and returns the decoded JSON answer.
export async function api(method, path, body, opts) {
  const res = await send(method, path, body, opts);
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

// responseEvents posts body to the Responses API (stream: true) and
// yields each server-sent event's decoded data, whose type is its
// `event:` name. An `error` event is thrown as an ApiError, and so is a
// response.failed that no error event came before.
export async function* responseEvents(body, opts) {
  const res = await send('POST', '/v1/responses', body, opts);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value.replace(/\r\n?/g, '\n');
      let end;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const lines = buf.slice(0, end).split('\n');
        buf = buf.slice(end + 2);
        const field = (name) => lines.filter((l) => l.startsWith(name + ':'))
          .map((l) => l.slice(name.length + 1).replace(/^ /, '')).join('\n');
        const data = field('data');
        if (!data) continue;
        const obj = JSON.parse(data);
        obj.type = field('event') || obj.type;
        if (obj.type === 'error') throw new ApiError(res.status, { error: obj });
        if (obj.type === 'response.failed') throw new ApiError(res.status, { error: obj.response?.error }, 'The answer failed.');
        yield obj;
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

// showError puts err's message in el (an element with role=alert), or
// hides el when err is null.
export function showError(el, err) {
  if (!err) { el.hidden = true; el.textContent = ''; return; }
  if (err.name === 'AbortError') return;
  el.textContent = err instanceof ApiError ? err.message : `Error: ${err.message}`;
  el.hidden = false;
}

export const enc = encodeURIComponent;

// h builds an element: h('td', {class: 'x'}, 'text', child…).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// fmt formats a number for people: 1234567 → "1.23 M".
export function fmt(n, digits = 3) {
  if (n === null || n === undefined || Number.isNaN(n)) return '–';
  const a = Math.abs(n);
  if (a >= 1e9) return (n / 1e9).toPrecision(digits) + ' G';
  if (a >= 1e6) return (n / 1e6).toPrecision(digits) + ' M';
  if (a >= 1e4) return (n / 1e3).toPrecision(digits) + ' k';
  if (Number.isInteger(n)) return String(n);
  return a >= 100 ? n.toFixed(0) : a >= 1 ? n.toFixed(2) : n.toPrecision(2);
}

// Shared lists, fetched once per page visit and on demand.
export async function listModels() { return (await api('GET', '/v1/models')).data || []; }
export async function listDeployments() { return (await api('GET', '/v1/deployments')).data || []; }

// devicesOf gives the device names the server knows, from the models'
// records (each lists the devices it can be deployed on) and its
// deployments.
export function devicesOf(models, deployments) {
  const s = new Set();
  for (const m of models) for (const d of m.neuromorphic?.devices || []) s.add(d);
  for (const d of deployments) if (d.device?.name) s.add(d.device.name);
  if (!s.size) ['cpu', 'loihi', 'xylo'].forEach((d) => s.add(d));
  return [...s].sort((a, b) => (a === 'cpu' ? -1 : b === 'cpu' ? 1 : a.localeCompare(b)));
}

// isOwn reports whether a model record is the caller's compiled network.
export const isOwnModel = (m) => m.owned_by && m.owned_by !== 'neuro' && m.owned_by !== 'system';
