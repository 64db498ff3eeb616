// /v1/responses against a real examples/server, in real and mock mode: a
// stored conversation made, read back, continued, streamed and deleted.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Neuro, NotFoundError, BadRequestError } from '../dist/index.js';
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
      const deltas = types.filter((t) => t === 'response.output_text.delta').length;
      assert.deepEqual(types, [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...Array(deltas).fill('response.output_text.delta'),
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        types.at(-1),
      ]);
      assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
      assert.equal(events[0].response.status, 'in_progress');
      assert.equal(events[0].response.usage, null);
      const last = events.at(-1);
      assert.ok(['response.completed', 'response.incomplete'].includes(last.type), last.type);
      const text = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
      assert.equal(text, last.response.output_text);
      assert.equal(last.response.previous_response_id, second.id);
      assert.equal((await client.responses.retrieve(last.response.id)).output_text, text);

      for (const r of [first, second, last.response]) {
        assert.deepEqual(await client.responses.delete(r.id), { id: r.id, object: 'response', deleted: true });
      }
      await assert.rejects(
        client.responses.retrieve(first.id),
        (err) => err instanceof NotFoundError && err.code === 'response_not_found' && err.param === 'response_id',
      );
      await assert.rejects(
        client.responses.create({ ...opts, input: 'Again?', previous_response_id: second.id }),
        (err) => err instanceof NotFoundError && err.code === 'response_not_found' && err.param === 'previous_response_id',
      );
    });

    test('the fields echoed, and an unstored response', async () => {
      const r = await client.responses.create({
        model: 'neuro-1-lite',
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Name a sea.' }] }],
        instructions: 'Be brief.',
        store: false,
        max_output_tokens: 4,
        temperature: 0,
        top_p: 1,
        metadata: { topic: 'seas' },
        user: 'u-1',
      });
      assert.deepEqual([r.instructions, r.store, r.metadata, r.max_output_tokens, r.temperature, r.top_p, r.user], ['Be brief.', false, { topic: 'seas' }, 4, 0, 1, 'u-1']);
      const item = r.output[0];
      assert.deepEqual([item.type, item.role, item.content[0].type, item.content[0].annotations], ['message', 'assistant', 'output_text', []]);
      assert.match(item.id, /^msg_/);
      assert.ok(r.usage.output_tokens <= 4);
      assert.equal(r.usage.output_tokens_details.reasoning_tokens, 0);
      if (r.status === 'incomplete') assert.deepEqual(r.incomplete_details, { reason: 'max_output_tokens' });
      else assert.deepEqual([r.status, r.incomplete_details], ['completed', null]);
      assert.equal(r.error, null);
      assert.ok(r.neuro.timesteps > 0);
      await assert.rejects(client.responses.retrieve(r.id), (err) => err instanceof NotFoundError && err.code === 'response_not_found');
    });

    test('errors before a stream starts, and an unsupported field', async () => {
      await assert.rejects(
        client.responses.create({ model: 'neuro-1-lite', input: 'Hi', previous_response_id: 'resp_unknown', stream: true }),
        (err) => err instanceof NotFoundError && err.code === 'response_not_found' && err.param === 'previous_response_id',
      );
      await assert.rejects(
        client.responses.create({ model: 'neuro-1-lite', input: 'Hi', tools: [{ type: 'web_search' }] }),
        (err) => err instanceof BadRequestError && err.code === 'unsupported_parameter' && err.param === 'tools',
      );
    });
  });
}
