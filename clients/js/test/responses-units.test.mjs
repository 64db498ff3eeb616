// The Responses API against node:http stubs: the request's fields, the
// typed response, the named events of a stream (which has no [DONE]), and
// the errors and retries of /v1/responses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Neuro, NotFoundError, BadRequestError, RateLimitError, APIConnectionError } from '../dist/index.js';
import { startStub, sendJSON, errorBody } from './helpers.mjs';

const client = (stub, opts = {}) => new Neuro({ baseURL: stub.url, apiKey: 'sk-stub', ...opts });

const usage = { input_tokens: 12, input_tokens_details: { cached_tokens: 8 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 14 };

function response(fields = {}) {
  const text = fields.text ?? 'Hello';
  return {
    id: 'resp_1',
    object: 'response',
    created_at: 1,
    status: 'completed',
    model: 'neuro-1-lite',
    previous_response_id: null,
    instructions: null,
    output: [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
    output_text: text,
    incomplete_details: null,
    error: null,
    store: true,
    metadata: {},
    usage,
    ...fields,
  };
}

/** The events of a streamed response whose text is the pieces, ending with last. */
function events(pieces = ['Hel', 'lo'], last = 'response.completed') {
  const r = response({ text: pieces.join('') });
  const at = { item_id: 'msg_1', output_index: 0, content_index: 0 };
  const part = { type: 'output_text', text: '', annotations: [] };
  const out = [
    // As the server sends them: no output and no usage yet.
    { type: 'response.created', response: { ...r, status: 'in_progress', output: [], output_text: '', usage: null } },
    { type: 'response.in_progress', response: { ...r, status: 'in_progress', output: [], output_text: '', usage: null } },
    { type: 'response.output_item.added', output_index: 0, item: { ...r.output[0], status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', ...at, part },
    ...pieces.map((delta) => ({ type: 'response.output_text.delta', ...at, delta, logprobs: [] })),
    { type: 'response.output_text.done', ...at, text: pieces.join('') },
    { type: 'response.content_part.done', ...at, part: { ...part, text: pieces.join('') } },
    { type: 'response.output_item.done', output_index: 0, item: r.output[0] },
    { type: last, response: { ...r, status: last.split('.')[1] } },
  ];
  return out.map((e, i) => ({ ...e, sequence_number: i }));
}

function sendEvents(res, list, end = true) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream' });
  for (const e of list) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  if (end) res.end();
}

test('responses.create sends its fields and returns the typed response', async () => {
  const stub = await startStub((req, res) => sendJSON(res, 200, response({ previous_response_id: 'resp_0' })));
  try {
    const params = {
      model: 'neuro-1-lite',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }],
      instructions: 'Be brief.',
      previous_response_id: 'resp_0',
      store: false,
      max_output_tokens: 16,
      temperature: 0,
      top_p: 0.5,
      metadata: { k: 'v' },
      user: 'u',
    };
    const r = await client(stub).responses.create(params);
    assert.equal(stub.requests[0].method, 'POST');
    assert.equal(stub.requests[0].url, '/v1/responses');
    assert.deepEqual(JSON.parse(stub.requests[0].body), params);
    assert.equal(r.output_text, 'Hello');
    assert.equal(r.previous_response_id, 'resp_0');
    assert.equal(r.usage.input_tokens_details.cached_tokens, 8);
    assert.equal(r.incomplete_details, null);
  } finally {
    await stub.close();
  }
});

test('responses.retrieve and delete', async () => {
  const stub = await startStub((req, res) =>
    req.method === 'GET' ? sendJSON(res, 200, response()) : sendJSON(res, 200, { id: 'resp_1', object: 'response', deleted: true }),
  );
  try {
    const c = client(stub);
    assert.equal((await c.responses.retrieve('resp_1')).id, 'resp_1');
    assert.deepEqual(await c.responses.delete('resp_1'), { id: 'resp_1', object: 'response', deleted: true });
    assert.deepEqual(stub.requests.map((r) => `${r.method} ${r.url}`), ['GET /v1/responses/resp_1', 'DELETE /v1/responses/resp_1']);
  } finally {
    await stub.close();
  }
});

test('a streamed response: typed events, parsed as they arrive, ending after response.completed without [DONE]', async () => {
  let release;
  const gate = new Promise((r) => (release = r));
  const list = events();
  const stub = await startStub(async (req, res) => {
    sendEvents(res, list.slice(0, 1), false);
    await gate;
    for (const e of list.slice(1)) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
    res.end();
  });
  try {
    const stream = await client(stub).responses.create({ model: 'm', input: 'Hi', stream: true });
    const got = [];
    for await (const e of stream) {
      got.push(e);
      if (got.length === 1) {
        assert.equal(e.type, 'response.created');
        assert.equal(e.response.usage, null);
        release();
      }
    }
    assert.deepEqual(got.map((e) => e.type), list.map((e) => e.type));
    assert.deepEqual(got.map((e) => e.sequence_number), list.map((_, i) => i));
    assert.equal(got.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join(''), 'Hello');
    assert.equal(got.at(-1).response.output_text, 'Hello');
    assert.equal(got.at(-1).response.usage.input_tokens_details.cached_tokens, 8);
  } finally {
    await stub.close();
  }
});

test('a streamed response ends after response.incomplete, and after an error event and response.failed', async () => {
  const failed = { ...response({ status: 'failed', text: '' }), output: [], usage: null, error: { code: 'device_error', message: 'device lost' } };
  const stub = await startStub((req, res, r, n) => {
    if (n === 1) sendEvents(res, events(['a'], 'response.incomplete'));
    else
      sendEvents(res, [
        ...events().slice(0, 5),
        { type: 'error', sequence_number: 5, code: 'device_error', message: 'device lost', param: null },
        { type: 'response.failed', sequence_number: 6, response: failed },
      ]);
  });
  try {
    const c = client(stub);
    const one = [];
    for await (const e of await c.responses.create({ model: 'm', input: 'Hi', stream: true })) one.push(e);
    assert.equal(one.at(-1).type, 'response.incomplete');
    const two = [];
    for await (const e of await c.responses.create({ model: 'm', input: 'Hi', stream: true })) two.push(e);
    assert.deepEqual(two.slice(-2).map((e) => e.type), ['error', 'response.failed']);
    assert.equal(two.at(-2).code, 'device_error');
    assert.equal(two.at(-1).response.error.code, 'device_error');
    assert.equal(two.at(-1).response.usage, null);
  } finally {
    await stub.close();
  }
});

test('a streamed response cut off before its last event is a connection error', async () => {
  const stub = await startStub((req, res) => sendEvents(res, events().slice(0, 4)));
  try {
    const got = [];
    await assert.rejects(async () => {
      for await (const e of await client(stub).responses.create({ model: 'm', input: 'Hi', stream: true })) got.push(e);
    }, (err) => err instanceof APIConnectionError && /before its last event/.test(err.message));
    assert.equal(got.length, 4);
  } finally {
    await stub.close();
  }
});

test('responses errors: 404 response_not_found, 400 unsupported_parameter, 429 insufficient_quota, typed and not retried', async () => {
  const cases = [
    [404, 'not_found_error', 'response_not_found', 'response_id', NotFoundError],
    [400, 'invalid_request_error', 'unsupported_parameter', 'tools', BadRequestError],
    [429, 'rate_limit_error', 'insufficient_quota', null, RateLimitError],
  ];
  for (const [status, type, code, param, kind] of cases) {
    const stub = await startStub((req, res) => sendJSON(res, status, errorBody('stub', type, code, param)));
    try {
      const c = client(stub);
      const call = status === 404 ? c.responses.retrieve('resp_x') : c.responses.create({ model: 'm', input: 'Hi', tools: [] });
      await assert.rejects(call, (err) => {
        assert.ok(err instanceof kind, `${status}: ${err}`);
        assert.deepEqual([err.status, err.type, err.code, err.param], [status, type, code, param]);
        return true;
      });
      assert.equal(stub.requests.length, 1, `${status} was retried`);
    } finally {
      await stub.close();
    }
  }
});

test('a streamed response is retried on 429 rate_limit_exceeded and 503 before it starts', async () => {
  const stub = await startStub((req, res, r, n) => {
    if (n === 1) sendJSON(res, 429, errorBody('slow down', 'rate_limit_error', 'rate_limit_exceeded'), { 'Retry-After': '0' });
    else if (n === 2) sendJSON(res, 503, errorBody('busy', 'server_error', 'overloaded'), { 'Retry-After': '0' });
    else sendEvents(res, events());
  });
  try {
    const got = [];
    for await (const e of await client(stub).responses.create({ model: 'm', input: 'Hi', stream: true })) got.push(e);
    assert.equal(got.at(-1).type, 'response.completed');
    assert.equal(stub.requests.length, 3);
  } finally {
    await stub.close();
  }
});
