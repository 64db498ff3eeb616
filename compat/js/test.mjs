// The npm openai client (v6) against a Neuro server on 127.0.0.1, started
// by compat/cmd/testserver (the binary in $NEURO_TESTSERVER, else `go run`).
// Run by .ci/compat:  npm ci && node --test test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';

const compatDir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

function startServer(mock) {
  const args = mock ? ['-mock'] : [];
  const bin = process.env.NEURO_TESTSERVER;
  const child = bin
    ? spawn(bin, args, { cwd: compatDir, stdio: ['pipe', 'pipe', 'inherit'] })
    : spawn('go', ['run', './cmd/testserver', ...args], { cwd: compatDir, stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('testserver did not start in 120 s')), 120_000);
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`testserver exited with ${code}`)));
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      const { url, key, endless_bias } = JSON.parse(line);
      resolve({ url, key, endlessBias: endless_bias, child });
    });
  });
}

const servers = {};
before(async () => {
  servers.real = await startServer(false);
  servers.mock = await startServer(true);
});
after(() => {
  for (const s of Object.values(servers)) s.child.stdin.end(); // the server stops when its stdin closes
});

const client = (s, key = s.key) => new OpenAI({ apiKey: key, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 30_000 });
const user = (content) => [{ role: 'user', content }];

// checkResponse checks a response object as the Responses API has it.
function checkResponse(r) {
  assert.equal(r.object, 'response');
  assert.match(r.id, /^resp_/);
  assert.ok(['completed', 'incomplete'].includes(r.status), `status ${r.status}`);
  assert.equal(r.model, 'neuro-1-lite');
  assert.ok(r.output_text.length > 0, 'output_text is empty');
  assert.equal(r.output.length, 1);
  assert.equal(r.output[0].type, 'message');
  assert.equal(r.output[0].role, 'assistant');
  assert.equal(r.output[0].content[0].type, 'output_text');
  assert.equal(r.output[0].content[0].text, r.output_text);
  assert.equal(r.status === 'incomplete', r.incomplete_details?.reason === 'max_output_tokens');
  const u = r.usage;
  assert.ok(u.input_tokens > 0 && u.output_tokens > 0 && u.output_tokens <= 16, JSON.stringify(u));
  assert.equal(typeof u.input_tokens_details.cached_tokens, 'number');
  assert.equal(u.total_tokens, u.input_tokens + u.output_tokens);
}

for (const mode of ['real', 'mock']) {
  test(`${mode}: list and retrieve models`, async () => {
    const c = client(servers[mode]);
    const ids = [];
    for await (const m of c.models.list()) ids.push(m.id);
    for (const id of ['neuro-1-lite', 'neuro-1-standard', 'neuro-1-heavy']) assert.ok(ids.includes(id), `${id} in ${ids}`);
    assert.equal((await c.models.retrieve('neuro-1')).id, 'neuro-1-standard');
  });

  test(`${mode}: chat, streamed and not, with include_usage`, async () => {
    const c = client(servers[mode]);
    const body = { model: 'neuro-1-lite', messages: user('Tell me a story.'), max_tokens: 12, temperature: 0 };
    const res = await c.chat.completions.create(body);
    assert.equal(res.object, 'chat.completion');
    assert.equal(res.model, 'neuro-1-lite');
    const choice = res.choices[0];
    assert.equal(choice.message.role, 'assistant');
    assert.ok(choice.message.content.length > 0);
    assert.equal(res.usage.total_tokens, res.usage.prompt_tokens + res.usage.completion_tokens);

    const stream = await c.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
    let text = '', finish = null, usage = null, ids = new Set();
    for await (const chunk of stream) {
      ids.add(chunk.id);
      assert.equal(usage, null, 'a chunk after the usage chunk');
      if (chunk.usage) { assert.equal(chunk.choices.length, 0); usage = chunk.usage; continue; }
      text += chunk.choices[0].delta.content ?? '';
      finish = chunk.choices[0].finish_reason ?? finish;
    }
    assert.equal(ids.size, 1);
    assert.deepEqual(usage, res.usage);
    assert.equal(finish, choice.finish_reason);
    assert.equal(text, choice.message.content);
  });

  test(`${mode}: text completion and prompt scoring`, async () => {
    const c = client(servers[mode]);
    const body = { model: 'neuro-1-lite', prompt: 'The fox', max_tokens: 8, temperature: 0 };
    const res = await c.completions.create(body);
    assert.equal(res.object, 'text_completion');
    assert.ok(res.choices[0].text.length > 0);
    if (mode === 'real') {
      let text = '';
      for await (const chunk of await c.completions.create({ ...body, stream: true })) text += chunk.choices[0]?.text ?? '';
      assert.equal(text, res.choices[0].text);
    } else {
      await assert.rejects(c.completions.create({ ...body, stream: true }),
        (e) => e instanceof OpenAI.BadRequestError && e.code === 'stream_not_supported');
    }
    const score = await c.completions.create({ model: 'neuro-1-lite', prompt: 'The quick brown fox', max_tokens: 0, echo: true, logprobs: 0 });
    const lp = score.choices[0].logprobs;
    assert.equal(score.choices[0].text, 'The quick brown fox');
    assert.equal(lp.tokens.length, score.usage.prompt_tokens);
    assert.equal(lp.token_logprobs[0], null);
    assert.ok(lp.token_logprobs.slice(1).every((v) => typeof v === 'number' && v <= 0));
  });

  test(`${mode}: errors are the client's typed errors`, async () => {
    const s = servers[mode];
    await assert.rejects(client(s, 'sk-wrong').models.list(),
      (e) => e instanceof OpenAI.AuthenticationError && e.status === 401 && e.code === 'invalid_api_key');
    const c = client(s);
    await assert.rejects(c.chat.completions.create({ model: 'gpt-4o', messages: user('x') }),
      (e) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found');
    await assert.rejects(c.chat.completions.create({ model: 'neuro-1-lite', messages: user('x'), n: 9 }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'n' && e.type === 'invalid_request_error');
    await assert.rejects(c.chat.completions.create({ model: 'neuro-1-lite', messages: [], stream: true }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'messages');
    assert.ok((await fetch(`${s.url}/health`)).ok);
  });
}

for (const mode of ['real', 'mock']) {
  // The Responses API: plain, streamed (raw events and the SDK's
  // accumulating stream), chained, retrieved and deleted.
  test(`${mode}: responses create, stream, chain, retrieve and delete`, async () => {
    const c = client(servers[mode]);
    const body = { model: 'neuro-1-lite', input: 'Tell me a story.', max_output_tokens: 16, temperature: 0 };
    const a = await c.responses.create(body);
    checkResponse(a);
    assert.equal(a.previous_response_id, null);

    // Streamed: the raw events, in order, their deltas joining to the text.
    const stream = await c.responses.create({ ...body, stream: true });
    const types = [], seqs = [];
    let deltas = '', done = null, final = null;
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
      if (ev.type === 'response.output_text.delta') deltas += ev.delta;
      if (ev.type === 'response.output_text.done') done = ev.text;
      if (ev.type === 'response.completed' || ev.type === 'response.incomplete') final = ev.response;
    }
    for (const t of ['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added',
      'response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done']) {
      assert.ok(types.includes(t), `${t} in ${types}`);
    }
    assert.equal(types[0], 'response.created');
    assert.ok(['response.completed', 'response.incomplete'].includes(types.at(-1)), `last event ${types.at(-1)}`);
    assert.deepEqual(seqs, seqs.map((_, i) => i), 'sequence numbers');
    checkResponse(final);
    assert.equal(deltas, final.output_text);
    assert.equal(done, final.output_text);
    assert.equal(final.output_text, a.output_text, 'streamed and not, at temperature 0');

    // The SDK's accumulating stream builds the same message from the
    // events. (Its snapshot takes the object of response.completed but
    // not of response.incomplete, and it does not derive output_text: a
    // turn cut at max_output_tokens keeps response.created's object
    // around the message it built.)
    const acc = c.responses.stream(body);
    let accDeltas = '';
    acc.on('response.output_text.delta', (ev) => { accDeltas += ev.delta; });
    const fin = await acc.finalResponse();
    assert.match(fin.id, /^resp_/);
    assert.equal(fin.output.length, 1);
    assert.equal(fin.output[0].content[0].text, a.output_text);
    assert.equal(accDeltas, a.output_text);

    // Chained: the second turn continues the first from its stored state.
    const body2 = { ...body, input: 'And then?', previous_response_id: a.id };
    const b = await c.responses.create(body2);
    checkResponse(b);
    assert.equal(b.previous_response_id, a.id);
    assert.ok(b.usage.input_tokens > a.usage.input_tokens, 'input_tokens count the earlier turn');
    assert.ok(b.usage.input_tokens_details.cached_tokens > 0, `cached_tokens ${b.usage.input_tokens_details.cached_tokens}`);
    if (mode === 'real') {
      const whole = await c.chat.completions.create({
        model: 'neuro-1-lite', max_tokens: 16, temperature: 0,
        messages: [{ role: 'user', content: body.input }, { role: 'assistant', content: a.output_text }, { role: 'user', content: body2.input }],
      });
      assert.equal(b.output_text, whole.choices[0].message.content, 'the chained turn equals the whole conversation sent to chat');
      assert.equal(b.usage.input_tokens, whole.usage.prompt_tokens);
    }
    // Chained and streamed.
    let chainedDeltas = '';
    for await (const ev of await c.responses.create({ ...body2, stream: true })) {
      if (ev.type === 'response.output_text.delta') chainedDeltas += ev.delta;
    }
    assert.equal(chainedDeltas, b.output_text);

    // Retrieve, delete, then it is gone.
    const got = await c.responses.retrieve(a.id);
    assert.equal(got.id, a.id);
    assert.equal(got.object, 'response');
    assert.equal(got.output_text, a.output_text);
    assert.deepEqual(got.usage, a.usage);
    await c.responses.delete(b.id); // typed void: what the server sends is not checked by the SDK
    await assert.rejects(c.responses.retrieve(b.id), (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
    await assert.rejects(c.responses.delete(b.id), (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
    await assert.rejects(c.responses.create({ ...body, previous_response_id: b.id }),
      (e) => e instanceof OpenAI.NotFoundError && e.param === 'previous_response_id');
    // An id that was never made.
    await assert.rejects(c.responses.retrieve('resp_nope'), (e) => e instanceof OpenAI.NotFoundError);
  });

  test(`${mode}: responses refuse what they do not support`, async () => {
    const c = client(servers[mode]);
    const body = { model: 'neuro-1-lite', input: 'x', max_output_tokens: 16, temperature: 0 };
    await assert.rejects(c.responses.create({ ...body, tools: [{ type: 'function', name: 'f', parameters: {}, strict: false }] }),
      (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'tools' && e.code === 'unsupported_parameter');
    await assert.rejects(c.responses.create({ ...body, stream: true, reasoning: { effort: 'low' } }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'reasoning');
    await assert.rejects(c.responses.create({ ...body, model: 'gpt-4o' }),
      (e) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found');
  });
}

test('real: n, seed, stop and logprobs', async () => {
  const c = client(servers.real);
  const body = { model: 'neuro-1-standard', messages: user('Once upon a time'), max_tokens: 16, temperature: 1, n: 3, seed: 9, logprobs: true, top_logprobs: 2 };
  const a = await c.chat.completions.create(body);
  const b = await c.chat.completions.create(body);
  assert.equal(a.choices.length, 3);
  assert.deepEqual(a.choices.map((x) => x.message.content), b.choices.map((x) => x.message.content));
  assert.ok(new Set(a.choices.map((x) => x.message.content)).size > 1, 'three sampled choices are identical');
  for (const ch of a.choices) {
    assert.ok(ch.logprobs.content.length > 0);
    assert.equal(ch.logprobs.content[0].top_logprobs.length, 2);
  }
  const text = a.choices[0].message.content;
  assert.ok(text.length >= 8, `text too short to cut: ${JSON.stringify(text)}`);
  const stop = text.slice(text.length >> 1, (text.length >> 1) + 2);
  const cut = await c.chat.completions.create({ ...body, n: 1, logprobs: false, top_logprobs: undefined, stop: ['\u0000none', stop] });
  assert.equal(cut.choices[0].message.content, text.slice(0, text.indexOf(stop)));
  assert.equal(cut.choices[0].finish_reason, 'stop');
});

test('real: a language model trained by own.py, compiled over REST, chats on cpu and on loihi', async () => {
  const s = servers.real;
  const own = path.join(compatDir, '..', 'models', 'train', 'testdata', 'own');
  const b64 = (name) => readFileSync(path.join(own, name)).toString('base64');
  const call = async (method, p, body) => {
    const res = await fetch(`${s.url}${p}`, { method, headers: { Authorization: `Bearer ${s.key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const json = await res.json();
    assert.ok(res.ok, `${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const net = await call('POST', '/v1/compile', {
    model_format: 'pytorch', model_file: b64('model.pt'), name: 'tales',
    options: { task: 'causal-lm', tokenizer_file: b64('tokenizer.json'), chat_template: 'neuro' },
  });
  assert.equal(net.language_model.vocab_size, 1024);
  await call('POST', '/v1/deployments', { model: net.id, device: 'cpu', id: 'tales-cpu' });
  await call('POST', '/v1/deployments', { model: net.id, device: 'loihi', id: 'tales-loihi' });
  const c = client(s);
  assert.equal((await c.models.retrieve(net.id)).id, net.id);
  const body = { model: net.id, messages: user('Tell me about the fox.'), max_tokens: 24, temperature: 0 };
  const res = await c.chat.completions.create(body);
  assert.equal(res.model, net.id);
  assert.ok(res.choices[0].message.content.length > 0);
  let text = '';
  for await (const chunk of await c.chat.completions.create({ ...body, stream: true })) text += chunk.choices[0]?.delta.content ?? '';
  assert.equal(text, res.choices[0].message.content);
  const onLoihi = new OpenAI({ apiKey: s.key, baseURL: `${s.url}/v1/deployments/tales-loihi`, maxRetries: 0, timeout: 30_000 });
  const chip = await onLoihi.chat.completions.create(body);
  assert.ok(chip.choices[0].message.content.length > 0);
  assert.ok(chip.usage.neuromorphic.timesteps > 0);
  const scored = await c.completions.create({ model: net.id, prompt: 'Once upon a time there was a king', max_tokens: 0, echo: true, logprobs: 1 });
  assert.ok(scored.choices[0].logprobs.token_logprobs.slice(1).every((x) => x < 0));
  await call('DELETE', '/v1/deployments/tales-cpu');
  await call('DELETE', '/v1/deployments/tales-loihi');
  await call('DELETE', `/v1/models/${net.id}`);
});

test('real: breaking off a stream stops the generation', async () => {
  const s = servers.real;
  const c = client(s);
  const auth = { headers: { Authorization: `Bearer ${s.key}` } };
  const get = async (p) => (await fetch(`${s.url}${p}`, auth)).json();
  const before = (await get('/v1/telemetry?deployment=neuro-1-heavy-cpu')).requests;
  // neuro-1-heavy has no context limit, and this logit_bias bans its end
  // tokens: the completion would run to the server's max_tokens (4096).
  const stream = await c.chat.completions.create({ model: 'neuro-1-heavy', messages: user('Go on'), stream: true, logit_bias: s.endlessBias });
  let n = 0;
  for await (const chunk of stream) {
    assert.equal(chunk.choices[0].finish_reason, null, 'the completion ended before the client left');
    if (++n === 3) break; // the client closes the connection
  }
  const deadline = Date.now() + 5000;
  for (;;) {
    const d = await get('/v1/deployments/neuro-1-heavy-cpu');
    const t = (await get('/v1/telemetry?deployment=neuro-1-heavy-cpu')).requests;
    if (d.load.active === 0 && d.load.queued === 0 && t.errors === before.errors + 1) break;
    assert.ok(Date.now() < deadline, `still busy 5 s after the client left: ${JSON.stringify(d.load)}, ${JSON.stringify(t)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
});
