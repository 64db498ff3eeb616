// The console's shell: the key prompt, the hash router (#/chat,
// #/networks, #/deployments, #/telemetry) and each page's enter/leave.

import { api, apiKey, onUnauthorized, showError, ApiError } from './api.js';
import * as chat from './chat.js';
import * as networks from './networks.js';
import * as deployments from './deployments.js';
import * as telemetry from './telemetry.js';

const pages = { chat, networks, deployments, telemetry };
const $ = (id) => document.getElementById(id);
let current = null;

function show(name) {
  for (const s of document.querySelectorAll('main > .page')) s.hidden = s.id !== 'page-' + name;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.page === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function route() {
  if (!apiKey.get()) { signIn(); return; }
  const name = (location.hash.match(/^#\/(\w+)/) || [])[1];
  const next = pages[name] ? name : 'chat';
  if (current && current !== next) pages[current].leave?.();
  show(next);
  $('nav').hidden = false;
  $('signout').hidden = false;
  document.title = `${next[0].toUpperCase() + next.slice(1)} · Neuro console`;
  const first = current === null;
  current = next;
  pages[next].enter();
  if (!first) $('main').focus({ preventScroll: true });
  telemetry.collect(); // the charts keep their history while you are elsewhere
}

function signIn(message) {
  if (current) pages[current].leave?.();
  current = null;
  telemetry.stop();
  $('nav').hidden = true;
  $('signout').hidden = true;
  show('login');
  document.title = 'Sign in · Neuro console';
  showError($('login-error'), message ? new Error(message) : null);
  if (message) $('login-error').textContent = message;
  $('api-key').focus();
}

$('login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const key = $('api-key').value.trim();
  const btn = ev.submitter || $('login-form').querySelector('button');
  btn.disabled = true;
  try {
    await api('GET', '/v1/models', undefined, { key });
    apiKey.set(key);
    $('api-key').value = '';
    showError($('login-error'), null);
    route();
  } catch (err) {
    const msg = err instanceof ApiError && err.status === 401
      ? `This key was not accepted: ${err.message}`
      : err.message;
    showError($('login-error'), new Error(msg));
    $('login-error').textContent = msg;
    $('api-key').select();
  } finally {
    btn.disabled = false;
  }
});

$('signout').addEventListener('click', () => { apiKey.clear(); signIn(); });

onUnauthorized((err) => {
  apiKey.clear();
  signIn(`The server no longer accepts this key: ${err.message}`);
});

window.addEventListener('hashchange', route);
route();
document.documentElement.dataset.ready = 'true';
