// Retries, timeouts, aborts and stream endings against node:http stubs that
// answer what a test needs: a 429 with Retry-After, a connection dropped
// after the request arrived, an answer that never comes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import {
  Neuro,
  BadRequestError,
  NotFoundError,
  ConflictError,
  UnprocessableEntityError,
  PermissionDeniedError,
  AuthenticationError,
  RateLimitError,
  InternalServerError,
  APIConnectionError,
  APITimeoutError,
  APIUserAbortError,
} from '../dist/index.js';
import { startStub, sendJSON, errorBody } from './helpers.mjs';

const run = { id: 'run-1', object: 'network.run', outputs: [] };
const client = (stub, opts = {}) => new Neuro({ baseURL: stub.url, apiKey: 'sk-stub', ...opts });

test('a 429 with Retry-After: 1 is retried after about a second, then succeeds', async () => {
  const stub = await startStub((req, res, r, n) => {
    if (n === 1) sendJSON(res, 429, errorBody('slow down', 'rate_limit_error', 'rate_limit_exceeded'), { 'Retry-After': '1' });
    else sendJSON(res, 200, run);
  });
  try {
    const out = await client(stub).deployments.run('dep', { inputs: [[1, 2]] });
    assert.equal(out.id, 'run-1');
    assert.equal(stub.requests.length, 2);
    const gap = stub.requests[1].at - stub.requests[0].at;
    assert.ok(gap >= 950 && gap < 2500, `retried after ${gap} ms`);
    assert.equal(stub.requests[1].body, stub.requests[0].body, 'the same body is sent again');
  } finally {
    await stub.close();
  }
});

test('503 is retried with backoff; after maxRetries the error is thrown', async () => {
  const stub = await startStub((req, res) => sendJSON(res, 503, errorBody('busy', 'server_error', 'overloaded')));
  try {
    await assert.rejects(client(stub, { maxRetries: 2 }).models.list(), (e) => e instanceof InternalServerError && e.status === 503 && e.code === 'overloaded');
    assert.equal(stub.requests.length, 3);
    const gaps = [1, 2].map((i) => stub.requests[i].at - stub.requests[i - 1].at);
    assert.ok(gaps[0] >= 350 && gaps[0] < 1500, `first backoff ${gaps[0]} ms`);
    assert.ok(gaps[1] >= 700 && gaps[1] < 2500, `second backoff ${gaps[1]} ms`);
  } finally {
    await stub.close();
  }
});

test('other 4xx are never retried; nor is a used-up quota, nor a Retry-After over a minute', async () => {
  const answers = [
    [400, BadRequestError, errorBody('bad n', 'invalid_request_error', 'invalid_value', 'n'), {}],
    [401, AuthenticationError, errorBody('key', 'authentication_error', 'invalid_api_key'), {}],
    [403, PermissionDeniedError, errorBody('no', 'invalid_request_error', 'permission_denied'), {}],
    [404, NotFoundError, errorBody('none', 'not_found_error', 'model_not_found', 'model'), {}],
    [409, ConflictError, errorBody('taken', 'invalid_request_error', 'deployment_exists', 'id'), {}],
    [422, UnprocessableEntityError, errorBody('no fit', 'invalid_request_error', 'unsupported_model'), {}],
    [429, RateLimitError, errorBody('quota', 'rate_limit_error', 'insufficient_quota'), {}],
    [429, RateLimitError, errorBody('later', 'rate_limit_error', 'rate_limit_exceeded'), { 'Retry-After': '120' }],
  ];
  for (const [status, cls, body, headers] of answers) {
    const stub = await startStub((req, res) => sendJSON(res, status, body, headers));
    try {
      await assert.rejects(client(stub).deployments.create({ model: 'm' }), (e) => {
        assert.equal(e.constructor, cls);
        assert.deepEqual([e.status, e.code, e.param], [status, body.error.code, body.error.param]);
        return true;
      });
      assert.equal(stub.requests.length, 1, `${status} ${body.error.code} was sent ${stub.requests.length} times`);
    } finally {
      await stub.close();
    }
  }
});

test('a POST whose connection fails after it was sent is not retried, unless the caller says it is idempotent', async () => {
  const stub = await startStub((req) => req.socket.destroy());
  try {
    await assert.rejects(client(stub).deployments.run('dep', { inputs: [[1]] }), APIConnectionError);
    assert.equal(stub.requests.length, 1);
    await assert.rejects(client(stub).deployments.run('dep', { inputs: [[1]] }, { idempotent: true }), APIConnectionError);
    assert.equal(stub.requests.length, 1 + 3);
    await assert.rejects(client(stub).models.list(), APIConnectionError);
    assert.equal(stub.requests.length, 4 + 3, 'a GET is retried');
  } finally {
    await stub.close();
  }
});

test('a POST whose connection was refused (never sent) is retried', async () => {
  const probe = net.createServer();
  await new Promise((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address();
  await new Promise((r) => probe.close(r));
  // Nothing listens on port now; a server comes up there during the first backoff.
  const c = new Neuro({ baseURL: `http://127.0.0.1:${port}`, apiKey: 'k' });
  const pending = c.deployments.run('dep', { inputs: [[1]] });
  await new Promise((r) => setTimeout(r, 100));
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => sendJSON(res, 200, run));
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  try {
    assert.equal((await pending).id, 'run-1');
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('timeouts: a POST is not sent again, a GET is', async () => {
  const stub = await startStub(() => {}); // never answers
  try {
    const c = client(stub, { timeout: 200 });
    const t0 = Date.now();
    await assert.rejects(c.completions.create({ model: 'm', prompt: 'p' }), APITimeoutError);
    assert.ok(Date.now() - t0 < 3000);
    assert.equal(stub.requests.length, 1);
    await assert.rejects(c.models.retrieve('m', { maxRetries: 1 }), APITimeoutError);
    assert.equal(stub.requests.length, 3);
  } finally {
    await stub.close();
  }
});

test("the caller's AbortSignal ends a call, also while it waits to retry", async () => {
  const stub = await startStub((req, res, r, n) => {
    if (n === 1) return; // the first request never gets an answer
    sendJSON(res, 429, errorBody('later', 'rate_limit_error', 'rate_limit_exceeded'), { 'Retry-After': '30' });
  });
  try {
    const c = client(stub);
    let ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    await assert.rejects(c.models.list({ signal: ac.signal }), APIUserAbortError);
    ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const t0 = Date.now();
    await assert.rejects(c.models.list({ signal: ac.signal }), APIUserAbortError);
    assert.ok(Date.now() - t0 < 2000, 'the 30 s wait was cut short');
  } finally {
    await stub.close();
  }
});

test('health: a 503 is the report, not an error, and is not retried', async () => {
  const report = { status: 'unavailable', mock: false, deployments: [], reason: 'no model is deployed' };
  const stub = await startStub((req, res) => sendJSON(res, 503, report, { 'Retry-After': '5' }));
  try {
    assert.deepEqual(await client(stub).health(), report);
    assert.equal(stub.requests.length, 1);
  } finally {
    await stub.close();
  }
});

test('requests carry the key, JSON and nothing a browser would preflight beyond it', async () => {
  const stub = await startStub((req, res) => sendJSON(res, 200, run));
  try {
    const c = client(stub);
    await c.deployments.run('dep/1', { inputs: [new Float32Array([0.5, 1]), [new Float64Array([1, 2]), [3, 4]]], record: ['spikes'] });
    await c.telemetry.retrieve({ window: '5m', deployment: 'd 1' });
    await c.chat.completions.create({ deployment: 'neuro-1-lite-loihi', messages: [{ role: 'user', content: 'x' }] });
    await client(stub, { timeout: Infinity }).models.list(); // no timer, rather than one that fires at once
    const [runReq, tel, chat] = stub.requests;
    assert.equal(runReq.url, '/v1/deployments/dep%2F1/run');
    assert.deepEqual(JSON.parse(runReq.body), { inputs: [[0.5, 1], [[1, 2], [3, 4]]], record: ['spikes'] });
    assert.equal(runReq.headers.authorization, 'Bearer sk-stub');
    assert.equal(runReq.headers['content-type'], 'application/json');
    assert.equal(tel.url, '/v1/telemetry?window=5m&deployment=d+1');
    assert.equal(tel.headers['content-type'], undefined);
    assert.equal(chat.url, '/v1/deployments/neuro-1-lite-loihi/chat/completions');
    assert.equal(stub.requests[3].url, '/v1/models');
    assert.deepEqual(JSON.parse(chat.body), { messages: [{ role: 'user', content: 'x' }] });
    const safe = new Set(['host', 'connection', 'accept', 'accept-language', 'accept-encoding', 'content-type', 'content-length', 'authorization', 'user-agent', 'sec-fetch-mode']);
    for (const r of stub.requests) for (const h of Object.keys(r.headers)) assert.ok(safe.has(h), `header ${h}`);
  } finally {
    await stub.close();
  }
});

function sse(res, events, end = true) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  for (const e of events) res.write(`data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`);
  if (end) res.end();
}

const chunk = (content) => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const user = [{ role: 'user', content: 'x' }];

test('streams: an error event is thrown as its kind; a stream cut off before [DONE] is a connection error', async () => {
  const stub = await startStub((req, res, r, n) => {
    if (n === 1) sse(res, [chunk('a'), { error: { message: 'device failed', type: 'server_error', param: null, code: 'internal_error' } }]);
    else if (n === 2) sse(res, [chunk('a'), chunk('b')]);
    else sse(res, [chunk('a'), chunk('b'), '[DONE]']);
  });
  try {
    const c = client(stub);
    const got = [];
    const s1 = await c.chat.completions.create({ model: 'm', messages: user, stream: true });
    await assert.rejects(
      (async () => {
        for await (const ch of s1) got.push(ch.choices[0].delta.content);
      })(),
      (e) => e instanceof InternalServerError && e.status === undefined && e.code === 'internal_error' && e.message === 'device failed',
    );
    assert.deepEqual(got, ['a']);
    const s2 = await c.chat.completions.create({ model: 'm', messages: user, stream: true });
    await assert.rejects(
      (async () => {
        for await (const ch of s2) got.push(ch.choices[0].delta.content);
      })(),
      (e) => e instanceof APIConnectionError && /before \[DONE\]/.test(e.message),
    );
    const s3 = await c.chat.completions.create({ model: 'm', messages: user, stream: true });
    const text = [];
    for await (const ch of s3) text.push(ch.choices[0].delta.content);
    assert.deepEqual(text, ['a', 'b']);
    assert.equal(stub.requests[0].headers.accept, 'text/event-stream');
    assert.deepEqual(JSON.parse(stub.requests[0].body).stream, true);
  } finally {
    await stub.close();
  }
});

test('streams: breaking out of the loop closes the connection', async () => {
  let closed;
  const gone = new Promise((r) => (closed = r));
  const stub = await startStub((req, res) => {
    sse(res, [chunk('a'), chunk('b')], false);
    const timer = setInterval(() => res.write(`data: ${JSON.stringify(chunk('more'))}\n\n`), 20);
    res.on('close', () => {
      clearInterval(timer);
      closed(Date.now());
    });
  });
  try {
    const s = await client(stub).chat.completions.create({ model: 'm', messages: user, stream: true });
    let n = 0;
    for await (const ch of s) if (++n === 3) break;
    const t0 = Date.now();
    const at = await Promise.race([gone, new Promise((r) => setTimeout(() => r(0), 2000))]);
    assert.ok(at > 0, 'the server never saw the connection close');
    assert.ok(at - t0 < 500);
    await assert.rejects(async () => {
      for await (const ch of s) void ch;
    }, /only once/);
  } finally {
    await stub.close();
  }
});

test("streams: the caller's AbortSignal ends one being read", async () => {
  let closed;
  const gone = new Promise((r) => (closed = r));
  const stub = await startStub((req, res) => {
    sse(res, [chunk('a')], false);
    const timer = setInterval(() => res.write(`data: ${JSON.stringify(chunk('more'))}\n\n`), 20);
    res.on('close', () => {
      clearInterval(timer);
      closed(true);
    });
  });
  try {
    const ac = new AbortController();
    const s = await client(stub).chat.completions.create({ model: 'm', messages: user, stream: true }, { signal: ac.signal });
    let n = 0;
    await assert.rejects(async () => {
      for await (const ch of s) if (++n === 2) ac.abort();
    }, APIUserAbortError);
    assert.equal(await Promise.race([gone, new Promise((r) => setTimeout(() => r(false), 2000))]), true);
  } finally {
    await stub.close();
  }
});
