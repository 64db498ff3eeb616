// /v1/responses against a real examples/server, in real and mock mode: a
// stored conversation made, read back, continued, streamed and deleted.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Neuro, NotFoundError } from '../dist/index.js';
import { startServer } from './helpers.mjs';

for (const mode of ['real', 'mock']) {
  describe(`responses, ${mode} server`, () => {
    let server;
    let client;
    before(async () => {
      server = await startServer({ mock: mode === 'mock', keys: ['sk-resp-a'] });
      client = new Neuro({ baseURL: server.url, apiKey: 'sk-resp-a', maxRetries: 0, timeout: 60_000 });
    });
    after(() => server?.close());

    test('create, retrieve, continue, stream, delete', async () => {
      const opts = { model: 'neuro-1-lite', max_output_tokens: 16, temperature: 0 };
      const first = await client.responses.create({ ...opts, input: 'Tell me about the sea.' });
      assert.match(first.id, /^resp_/);
      assert.equal(first.object, 'response');
      assert.ok(['completed', 'incomplete'].includes(first.status), first.status);
      assert.ok(first.output_text.length > 0);
      assert.equal(first.output[0].content[0].text, first.output_text);
      assert.equal(first.usage.total_tokens, first.usage.input_tokens + first.usage.output_tokens);
      assert.ok(first.usage.input_tokens_details.cached_tokens <= first.usage.input_tokens);

      const got = await client.responses.retrieve(first.id);
      assert.equal(got.id, first.id);
      assert.equal(got.output_text, first.output_text);

      const second = await client.responses.create({ ...opts, input: 'And the mountains?', previous_response_id: first.id });
      assert.equal(second.previous_response_id, first.id);
      assert.notEqual(second.id, first.id);
      assert.ok(second.usage.input_tokens > first.usage.input_tokens + first.usage.output_tokens, 'the second turn sees the first');

      const events = [];
      const stream = await client.responses.create({ ...opts, input: 'And the sky?', previous_response_id: second.id, stream: true });
      for await (const e of stream) events.push(e);
      const types = events.map((e) => e.type);
      assert.deepEqual(types.slice(0, 2), ['response.created', 'response.in_progress']);
      const last = events.at(-1);
      assert.ok(['response.completed', 'response.incomplete'].includes(last.type), last.type);
      const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
      assert.equal(text, last.response.output_text);
      assert.equal(last.response.previous_response_id, second.id);

      for (const r of [first, second, last.response]) {
        assert.deepEqual(await client.responses.delete(r.id), { id: r.id, object: 'response', deleted: true });
      }
      await assert.rejects(client.responses.retrieve(first.id), (err) => err instanceof NotFoundError && err.code === 'response_not_found');
    });
  });
}
