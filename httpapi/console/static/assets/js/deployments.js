// The deployments page: every deployment the caller may see, refreshed
// while the page is open; create and delete the caller's own.

import { api, showError, listModels, listDeployments, devicesOf, h, enc } from './api.js';

const $ = (id) => document.getElementById(id);
let timer = 0;
let active = false;

export async function enter() {
  active = true;
  await refresh(true);
}

export function leave() { active = false; clearTimeout(timer); }

async function refresh(withModels) {
  clearTimeout(timer);
  try {
    const [deps, models] = await Promise.all([listDeployments(), withModels ? listModels() : null]);
    if (models) {
      const keep = $('deploy-model').value;
      $('deploy-model').replaceChildren(...models.map((m) => h('option', { value: m.id }, m.id)));
      if (keep) $('deploy-model').value = keep;
      const dev = $('deploy-device').value;
      $('deploy-device').replaceChildren(...devicesOf(models, deps).map((d) => h('option', { value: d }, d)));
      if (dev) $('deploy-device').value = dev;
    }
    render(deps);
    showError($('deployments-error'), null);
  } catch (err) {
    showError($('deployments-error'), err);
  }
  if (active) timer = setTimeout(() => refresh(false), 3000);
}

function render(deps) {
  const tbody = $('deployments').querySelector('tbody');
  deps.sort((a, b) => a.id.localeCompare(b.id));
  tbody.replaceChildren(...deps.map((d) => {
    const own = d.owned_by && d.owned_by !== 'system';
    const load = d.load ? `${d.load.active} running, ${d.load.queued} queued` : '–';
    return h('tr', { 'data-id': d.id },
      h('th', { scope: 'row' }, h('code', {}, d.id)),
      h('td', {}, d.model),
      h('td', {}, d.device?.name || '–', d.device?.model ? h('span', { class: 'hint' }, ` ${d.device.model}`) : d.device?.kind ? h('span', { class: 'hint' }, ` ${d.device.kind}`) : null),
      h('td', {}, h('span', { class: 'status ' + d.status, title: d.failure || null }, d.status), d.failure ? h('div', { class: 'hint' }, d.failure) : null),
      h('td', {}, d.node || '–'),
      h('td', {}, load, h('div', { class: 'hint' }, `${d.replicas ?? 1} × batch ${d.max_batch_size ?? '–'}`)),
      h('td', {}, own ? 'you' : d.owned_by || 'system'),
      h('td', {}, own ? h('button', { type: 'button', class: 'danger', onclick: () => remove(d.id) }, 'Delete') : null));
  }));
}

async function remove(id) {
  if (!confirm(`Delete the deployment ${id}?`)) return;
  try {
    await api('DELETE', `/v1/deployments/${enc(id)}`);
    showError($('deployments-error'), null);
  } catch (err) {
    showError($('deployments-error'), err);
  }
  refresh(false);
}

$('deploy-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const body = { model: $('deploy-model').value, device: $('deploy-device').value };
  const id = $('deploy-id').value.trim();
  if (id) body.id = id;
  const replicas = parseInt($('deploy-replicas').value, 10), batch = parseInt($('deploy-batch').value, 10);
  if (replicas) body.replicas = replicas;
  if (batch) body.max_batch_size = batch;
  const precision = $('deploy-precision').value;
  if (precision && body.device === 'cpu') body.precision = precision;
  const btn = ev.submitter;
  if (btn) btn.disabled = true;
  try {
    await api('POST', '/v1/deployments', body);
    showError($('deploy-error'), null);
    $('deploy-id').value = '';
  } catch (err) {
    showError($('deploy-error'), err);
  } finally {
    if (btn) btn.disabled = false;
  }
  refresh(false);
});
