// What the client adds to a call: the time per call of a small run request
// (one 64-value sample, 8 timesteps, on the built-in neuro-1-digits-cpu
// deployment) made through the client and made with a bare fetch,
// alternately, in one process against one real server.
//
//   node bench/overhead.mjs [calls per round, default 400] [rounds, default 10]
//
// It exits 1 when the client's median is more than 10% over raw fetch's.
//
// The server is examples/server, built as the tests build it (or
// NEURO_SERVER_BIN). Calls rotate over 40 API keys: the server allows each
// key 600 requests a minute. The client is also timed over a fetch that
// answers at once from memory, which is its own cost without the network.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Neuro } from '../dist/index.js';
import { startServer } from '../test/helpers.mjs';

const perRound = Number(process.argv[2] ?? 400);
const rounds = Number(process.argv[3] ?? 10);
const keys = Array.from({ length: 40 }, (_, i) => `sk-bench-${i}`);
const deployment = 'neuro-1-digits-cpu';
const body = { inputs: [Array.from({ length: 64 }, (_, i) => (i % 7) / 7)], timesteps: 8 };

function cpuName() {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) return m[1].trim();
  } catch {}
  return os.cpus()[0]?.model ?? 'unknown';
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const trimmedMean = (xs) => {
  const s = [...xs].sort((a, b) => a - b).slice(Math.floor(xs.length * 0.1), Math.ceil(xs.length * 0.9));
  return s.reduce((a, b) => a + b, 0) / s.length;
};

const server = await startServer({ keys });
try {
  const url = `${server.url}/v1/deployments/${deployment}/run`;
  const headers = keys.map((k) => ({ Authorization: `Bearer ${k}`, 'Content-Type': 'application/json', Accept: 'application/json' }));
  const clients = keys.map((apiKey) => new Neuro({ baseURL: server.url, apiKey, maxRetries: 0 }));
  let k = 0;

  const raw = async () => {
    const res = await fetch(url, { method: 'POST', headers: headers[k++ % keys.length], body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`raw fetch: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const viaClient = () => clients[k++ % keys.length].deployments.run(deployment, body);

  async function time(fn, n) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await fn();
    return Number(process.hrtime.bigint() - t0) / 1e3 / n; // µs per call
  }

  async function once(fn) {
    const t0 = process.hrtime.bigint();
    await fn();
    return Number(process.hrtime.bigint() - t0) / 1e3;
  }

  const check = await viaClient();
  if (check.outputs.length !== 1) throw new Error('unexpected run result');
  await time(raw, 200); // warm up both paths and the connection pool
  await time(viaClient, 200);

  // Calls alternate (raw, client, client, raw, ...), each timed alone, so
  // that whatever else the machine does falls on both sides alike.
  const rawUs = [];
  const clientUs = [];
  for (let i = 0; i < rounds * perRound; i++) {
    if (i % 2 === 0) {
      rawUs.push(await once(raw));
      clientUs.push(await once(viaClient));
    } else {
      clientUs.push(await once(viaClient));
      rawUs.push(await once(raw));
    }
  }

  // The client alone: a fetch that answers from memory.
  const canned = JSON.stringify(check);
  const memFetch = async () => new Response(canned, { status: 200, headers: { 'Content-Type': 'application/json' } });
  const memClient = new Neuro({ baseURL: server.url, apiKey: keys[0], fetch: memFetch });
  const memRaw = async () => (await memFetch(url, { method: 'POST', headers: headers[0], body: JSON.stringify(body) })).json();
  await time(memRaw, 2000);
  await time(() => memClient.deployments.run(deployment, body), 2000);
  const memRawUs = await time(memRaw, 20000);
  const memClientUs = await time(() => memClient.deployments.run(deployment, body), 20000);

  const r = median(rawUs);
  const c = median(clientUs);
  const pct = ((c - r) / r) * 100;
  const n = rawUs.length;
  console.log(`CPU: ${cpuName()} (${os.cpus().length} logical CPUs), node ${process.version}`);
  console.log(`run request: ${deployment}, 1 sample of 64 values, ${body.timesteps} timesteps; ${n} calls each way, alternating`);
  console.log(`raw fetch:    median ${r.toFixed(1)} µs/call, mean of the middle 80% ${trimmedMean(rawUs).toFixed(1)} µs`);
  console.log(`neuro-client: median ${c.toFixed(1)} µs/call, mean of the middle 80% ${trimmedMean(clientUs).toFixed(1)} µs`);
  console.log(`overhead: ${(c - r).toFixed(1)} µs/call, ${pct.toFixed(1)}% (target: within 10%)`);
  console.log(`without the network (a fetch answering from memory): raw ${memRawUs.toFixed(1)} µs/call, client ${memClientUs.toFixed(1)} µs/call: the client's own cost is ${(memClientUs - memRawUs).toFixed(1)} µs/call`);
  process.exitCode = pct <= 10 ? 0 : 1;
} finally {
  server.close();
}
