// Parts that need no server: the event-stream parser, base64, the
// configuration and the mapping of statuses to error kinds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Neuro,
  NeuroError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ConflictError,
  UnprocessableEntityError,
  RateLimitError,
  InternalServerError,
  APIConnectionError,
  APITimeoutError,
  SSEDecoder,
  packEvents,
  packRaster,
} from '../dist/index.js';
import { base64 } from '../dist/base64.js';
import { errorFromResponse } from '../dist/errors.js';
import { retryAfter } from '../dist/core.js';

test('SSEDecoder: events split anywhere, every line ending, comments and fields', () => {
  const text =
    ': a comment\r\n' +
    'event: update\n' +
    'data: {"a":1}\n\n' +
    'data:two\r\n' +
    'data: lines\r\n\r\n' +
    'id: 7\rretry: 10\rdata: cr\r\r' +
    'data: [DONE]\n\n';
  const want = [
    { event: 'update', data: '{"a":1}' },
    { event: '', data: 'two\nlines' },
    { event: '', data: 'cr' },
    { event: '', data: '[DONE]' },
  ];
  for (let size = 1; size <= text.length; size++) {
    const d = new SSEDecoder();
    const got = [];
    for (let i = 0; i < text.length; i += size) got.push(...d.push(text.slice(i, i + size)));
    assert.deepEqual(got, want, `pieces of ${size}`);
    assert.equal(d.end(), false);
  }
  const cut = new SSEDecoder();
  assert.deepEqual(cut.push('data: {"a":'), []);
  assert.equal(cut.end(), true, 'an event cut off is reported');
});

test('SSEDecoder: a blank line without data dispatches nothing', () => {
  const d = new SSEDecoder();
  assert.deepEqual(d.push('\n\nevent: x\n\n: c\n\ndata: y\n\n'), [{ event: '', data: 'y' }]);
});

test('base64 matches Buffer for every length and byte', () => {
  const bytes = new Uint8Array(600);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 151 + 7) & 255;
  for (let n = 0; n <= 70; n++) {
    const b = bytes.subarray(0, n);
    assert.equal(base64(b), Buffer.from(b).toString('base64'), `length ${n}`);
  }
  assert.equal(base64(bytes), Buffer.from(bytes).toString('base64'));
});

test('configuration: arguments, then NEURO_BASE_URL and NEURO_API_KEY, then defaults', () => {
  const saved = { url: process.env.NEURO_BASE_URL, key: process.env.NEURO_API_KEY };
  try {
    delete process.env.NEURO_BASE_URL;
    delete process.env.NEURO_API_KEY;
    let c = new Neuro();
    assert.equal(c.baseURL, 'http://127.0.0.1:8080');
    assert.equal(c.apiKey, undefined);
    assert.equal(c.maxRetries, 2);
    assert.equal(c.timeout, 600_000);

    process.env.NEURO_BASE_URL = 'http://example.test:9000/v1';
    process.env.NEURO_API_KEY = 'sk-env';
    c = new Neuro();
    assert.equal(c.baseURL, 'http://example.test:9000');
    assert.equal(c.apiKey, 'sk-env');

    c = new Neuro({ baseURL: 'https://h.test/neuro/v1/', apiKey: 'sk-arg', maxRetries: 0, timeout: 5 });
    assert.equal(c.baseURL, 'https://h.test/neuro');
    assert.equal(c.apiKey, 'sk-arg');
    const d = c.withOptions({ timeout: 7 });
    assert.deepEqual([d.baseURL, d.apiKey, d.maxRetries, d.timeout], ['https://h.test/neuro', 'sk-arg', 0, 7]);
  } finally {
    for (const [k, v] of [['NEURO_BASE_URL', saved.url], ['NEURO_API_KEY', saved.key]]) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  for (const url of ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080/v1', 'http://127.0.0.1:8080/v1/', 'http://127.0.0.1:8080']) {
    assert.equal(new Neuro({ baseURL: url }).baseURL, 'http://127.0.0.1:8080', url);
  }
  for (const url of ['127.0.0.1:8080', 'ftp://h.test', 'http://h.test/?k=1', 'http://u:p@h.test']) {
    assert.throws(() => new Neuro({ baseURL: url }), NeuroError, url);
  }
  assert.throws(() => new Neuro({ timeout: 0 }), NeuroError);
  assert.equal(new Neuro({ timeout: Infinity }).timeout, Infinity);
  assert.throws(() => new Neuro({ maxRetries: -1 }), NeuroError);
});

test('each status is its error kind, with the body fields', () => {
  const h = new Headers({ 'x-request-id': 'req_1' });
  const body = (code) => ({ error: { message: 'm', type: 't', param: 'p', code } });
  const kinds = [
    [400, BadRequestError],
    [401, AuthenticationError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, ConflictError],
    [422, UnprocessableEntityError],
    [429, RateLimitError],
    [500, InternalServerError],
    [503, InternalServerError],
    [413, NeuroError],
  ];
  for (const [status, cls] of kinds) {
    const e = errorFromResponse(status, body('c'), h);
    assert.equal(e.constructor, cls, String(status));
    assert.ok(e instanceof NeuroError && e instanceof Error);
    assert.deepEqual([e.status, e.type, e.code, e.param, e.message, e.requestID], [status, 't', 'c', 'p', 'm', 'req_1']);
    assert.equal(e.name, cls.name);
  }
  const plain = errorFromResponse(502, '<html>bad gateway</html>', undefined);
  assert.ok(plain instanceof InternalServerError);
  assert.equal(plain.code, null);
  assert.match(plain.message, /502.*bad gateway/);
  // An error event in a stream has no status: its type says the kind.
  const mid = errorFromResponse(undefined, { error: { message: 'gone', type: 'server_error', param: null, code: 'internal_error' } });
  assert.ok(mid instanceof InternalServerError);
  assert.equal(mid.status, undefined);
  assert.ok(new APITimeoutError() instanceof APIConnectionError);
});

test('Retry-After: seconds, a date, retry-after-ms', () => {
  assert.equal(retryAfter(new Headers({ 'retry-after': '1' })), 1000);
  assert.equal(retryAfter(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' })), 250);
  assert.equal(retryAfter(new Headers({})), undefined);
  assert.equal(retryAfter(new Headers({ 'retry-after': 'soon' })), undefined);
  const d = retryAfter(new Headers({ 'retry-after': new Date(Date.now() + 3000).toUTCString() }));
  assert.ok(d > 1000 && d <= 3000, String(d));
});

test('packEvents writes little-endian int32 pairs in base64', () => {
  const p = packEvents([[0, 3], [2, 9], [-1, 0x7fffffff]], 8);
  assert.equal(p.timesteps, 8);
  const b = Buffer.from(p.events_packed, 'base64');
  assert.deepEqual([0, 4, 8, 12, 16, 20].map((o) => b.readInt32LE(o)), [0, 3, 2, 9, -1, 0x7fffffff]);
  assert.equal(packEvents([], 1).events_packed, '');
  assert.throws(() => packEvents([[0, 2 ** 31]], 1), RangeError);
  assert.throws(() => packEvents([[0.5, 1]], 1), RangeError);
});

test('packRaster writes a row of bits per step, least significant first, in base64', () => {
  const r = packRaster([[0, 0], [0, 2], [1, 1], [2, 2], [2, 2]], 3, 3);
  // bits 0, 2, 4 and 8
  assert.deepEqual(r, { raster: 'FQE=', timesteps: 3 });
  assert.deepEqual([...Buffer.from(r.raster, 'base64')], [0x15, 0x01]);
  assert.deepEqual(packRaster([], 2, 5), { raster: 'AAA=', timesteps: 2 });
  assert.equal(packRaster([[1, 4]], 2, 5).raster, Buffer.from([0, 2]).toString('base64'));
  assert.throws(() => packRaster([[3, 0]], 3, 3), { name: 'RangeError', message: 'packRaster: event 0, [3, 0], is outside 3 timesteps of 3 inputs' });
  assert.throws(() => packRaster([[0, 0], [0, 3]], 3, 3), /event 1, \[0, 3\], is outside 3 timesteps of 3 inputs/);
  for (const ev of [[-1, 0], [0, -1], [0.5, 1], [NaN, 0]]) assert.throws(() => packRaster([ev], 3, 3), RangeError, String(ev));
  assert.throws(() => packRaster([], 0, 3), /a raster of 0 timesteps of 3 inputs/);
  assert.throws(() => packRaster([], 3, 0), RangeError);
});
