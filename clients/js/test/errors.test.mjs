// Each kind of error, produced by a real examples/server (real and mock
// mode) and caught as its class, with the fields of the server's body.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
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
  APIConnectionError,
  APITimeoutError,
} from '../dist/index.js';
import { startServer, readRepoFile, endlessBias, eventually } from './helpers.mjs';

const user = (content) => [{ role: 'user', content }];
const leaky = () => readRepoFile('compile/pytorch/testdata/snn/snntorch_leaky.pt');

/** Asserts that promise rejects with an error of cls carrying status, code and (when given) param; returns the error. */
async function rejectsWith(promise, cls, status, code, param) {
  let err;
  await assert.rejects(promise, (e) => {
    err = e;
    return true;
  });
  assert.ok(err instanceof cls, `${err?.constructor.name} (${err?.message}) is not a ${cls.name}`);
  assert.ok(err instanceof NeuroError);
  assert.equal(err.status, status);
  assert.equal(err.code, code);
  if (param !== undefined) assert.equal(err.param, param);
  assert.equal(typeof err.type, 'string');
  assert.ok(err.message.length > 0);
  assert.match(err.requestID, /^req_/);
  return err;
}

for (const mode of ['real', 'mock']) {
  describe(`${mode} server`, () => {
    let server;
    let client;
    const keyed = (apiKey, opts = {}) => new Neuro({ baseURL: server.url, apiKey, maxRetries: 0, ...opts });
    before(async () => {
      server = await startServer({ mock: mode === 'mock', keys: ['sk-err-a', 'sk-err-rate', 'sk-err-quota'] });
      client = keyed('sk-err-a');
    });
    after(() => server?.close());

    test('401: AuthenticationError', async () => {
      const e = await rejectsWith(keyed('sk-wrong').models.list(), AuthenticationError, 401, 'invalid_api_key');
      assert.equal(e.type, 'authentication_error');
      await rejectsWith(keyed(undefined).deployments.list(), AuthenticationError, 401, 'invalid_api_key');
    });

    test('403: PermissionDeniedError', async () => {
      await rejectsWith(client.deployments.delete('neuro-1-lite-cpu'), PermissionDeniedError, 403, 'permission_denied');
      await rejectsWith(client.models.delete('neuro-1-lite'), PermissionDeniedError, 403, 'permission_denied');
    });

    test('404: NotFoundError', async () => {
      const e = await rejectsWith(client.models.retrieve('gpt-4o'), NotFoundError, 404, 'model_not_found');
      assert.equal(e.type, 'not_found_error');
      await rejectsWith(client.deployments.retrieve('no-such-deployment'), NotFoundError, 404, 'deployment_not_found');
      await rejectsWith(client.chat.completions.create({ model: 'gpt-4o', messages: user('x') }), NotFoundError, 404, 'model_not_found');
      await rejectsWith(
        client.chat.completions.create({ model: 'gpt-4o', messages: user('x'), stream: true }),
        NotFoundError,
        404,
        'model_not_found',
      );
      // Another key's network does not exist for this one.
      const net = await client.networks.compile({ file: leaky(), format: 'pytorch' });
      await rejectsWith(keyed('sk-err-rate').models.retrieve(net.id), NotFoundError, 404, 'model_not_found');
      await client.models.delete(net.id);
    });

    test('409: ConflictError', async () => {
      const net = await client.networks.compile({ file: leaky(), format: 'pytorch' });
      const id = `conflict-${mode}`;
      await client.deployments.create({ model: net.id, id, wait: true });
      await rejectsWith(client.deployments.create({ model: net.id, id }), ConflictError, 409, 'deployment_exists');
      await rejectsWith(client.models.delete(net.id), ConflictError, 409, 'model_in_use');
      await client.deployments.delete(id);
      await client.models.delete(net.id);
    });

    test('422: UnprocessableEntityError', async () => {
      // A plain nn.Sequential state_dict does not say what its layers are.
      const file = readRepoFile('compile/testdata/digits/mlp_state_dict.pt');
      const e = await rejectsWith(client.networks.compile({ file, format: 'pytorch' }), UnprocessableEntityError, 422, 'unsupported_model');
      assert.match(e.message, /options\.layers/);
    });

    test('400: BadRequestError naming the field', async () => {
      const chat = (body) => client.chat.completions.create({ model: 'neuro-1-lite', messages: user('x'), ...body });
      await rejectsWith(chat({ n: 9 }), BadRequestError, 400, 'invalid_value', 'n');
      await rejectsWith(chat({ messages: [] }), BadRequestError, 400, 'invalid_value', 'messages');
      await rejectsWith(chat({ messages: [], stream: true }), BadRequestError, 400, 'invalid_value', 'messages');
      await rejectsWith(client.deployments.create({ model: 'neuro-1-lite', device: 'abacus' }), BadRequestError, 400, 'invalid_value', 'device');
      await rejectsWith(client.networks.compile({ file: leaky(), format: 'keras' }), BadRequestError, 400, 'invalid_value', 'model_format');
      await rejectsWith(client.networks.compile({ file: new Uint8Array(3), format: 'pytorch' }), BadRequestError, 400, 'invalid_model_file', 'model_file');
      await rejectsWith(client.deployments.run('neuro-1-digits-cpu', { inputs: [[1, 2, 3]] }), BadRequestError, 400, 'invalid_value', 'inputs[0]');
      await rejectsWith(client.deployments.run('neuro-1-lite-cpu', { inputs: [[1]] }), BadRequestError, 400, 'not_a_network');
    });

    test('429: RateLimitError with Retry-After, retried by a client that may retry', async () => {
      const c = keyed('sk-err-rate');
      let err;
      for (let n = 0; !err && n < 2000; n += 8) {
        const all = await Promise.allSettled(Array.from({ length: 8 }, () => c.deployments.retrieve('neuro-1-lite-cpu')));
        err = all.find((r) => r.status === 'rejected')?.reason;
      }
      assert.ok(err, 'no 429 after 2000 requests');
      assert.ok(err instanceof RateLimitError, `${err.constructor.name}: ${err.message}`);
      assert.deepEqual([err.status, err.type, err.code], [429, 'rate_limit_error', 'rate_limit_exceeded']);
      assert.equal(err.headers.get('retry-after'), '1');
      // The same call with retries waits for the server's second and succeeds.
      const t0 = Date.now();
      const d = await c.withOptions({ maxRetries: 2 }).deployments.retrieve('neuro-1-lite-cpu');
      assert.equal(d.id, 'neuro-1-lite-cpu');
      assert.ok(Date.now() - t0 < 5000);
    });

    // Real mode only: a mock generation is done in milliseconds.
    if (mode === 'real') {
      test('APITimeoutError: a generation longer than the timeout, not sent again', async () => {
        const dep = 'neuro-1-heavy-cpu';
        const before = (await client.telemetry.retrieve({ deployment: dep })).requests.total;
        const t0 = Date.now();
        // Eight choices of up to 4096 tokens that cannot end: seconds of work.
        const body = { model: 'neuro-1-heavy', messages: user('Go on'), max_tokens: 4096, n: 8, logit_bias: endlessBias('neuro-bpe-1k') };
        await assert.rejects(client.chat.completions.create(body, { timeout: 150, maxRetries: 2 }), APITimeoutError);
        assert.ok(Date.now() - t0 < 3000, `${Date.now() - t0} ms`);
        // The server saw one request, and stopped it when the client left.
        await eventually(
          async () => (await client.deployments.retrieve(dep)).load.active === 0 && (await client.telemetry.retrieve({ deployment: dep })).requests.total === before + 1,
          5000,
          'one request, ended',
        );
      });
    }

    test('429: RateLimitError insufficient_quota, not retried', async () => {
      const c = keyed('sk-err-quota', { maxRetries: 2 });
      const net = await c.networks.compile({ file: leaky(), format: 'pytorch' });
      const made = [];
      try {
        let err;
        for (let i = 0; i < 64 && !err; i++) {
          try {
            made.push((await c.deployments.create({ model: net.id })).id);
          } catch (e) {
            err = e;
          }
        }
        assert.ok(err instanceof RateLimitError, `${err?.constructor.name}: ${err?.message}`);
        assert.equal(err.code, 'insufficient_quota');
        assert.equal(err.headers.get('retry-after'), null);
        const before = (await c.telemetry.retrieve()).requests.by_endpoint['/v1/deployments'];
        await rejectsWith(c.deployments.create({ model: net.id }), RateLimitError, 429, 'insufficient_quota');
        const after = (await c.telemetry.retrieve()).requests.by_endpoint['/v1/deployments'];
        assert.equal(after, before + 1, 'a used-up quota was sent again');
      } finally {
        for (const id of made) await c.deployments.delete(id);
        await c.models.delete(net.id);
      }
    });
  });
}

test('APIConnectionError: nothing listens', async () => {
  const probe = net.createServer();
  await new Promise((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address();
  await new Promise((r) => probe.close(r));
  const c = new Neuro({ baseURL: `http://127.0.0.1:${port}`, apiKey: 'k', maxRetries: 0 });
  await assert.rejects(c.health(), (e) => e instanceof APIConnectionError && e.status === undefined && /ECONNREFUSED/.test(e.message));
});
