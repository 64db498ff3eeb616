// The npm openai client (v6) against a Neuro server on 127.0.0.1, started
// by compat/cmd/testserver (the binary in $NEURO_TESTSERVER, else `go run`).
// Run by .ci/compat:  npm ci && node --test test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
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
