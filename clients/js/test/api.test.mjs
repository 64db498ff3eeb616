// Every endpoint through the client against a real examples/server, in
// real mode and in mock mode: models, deployments, chat and text
// completions (streamed and not), the snnTorch and Norse networks compiled,
// deployed and run, telemetry, health and metrics.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Neuro, BadRequestError, Stream, packEvents, packRaster } from '../dist/index.js';
import { startServer, readRepoFile, endlessBias, eventually } from './helpers.mjs';

const user = (content) => [{ role: 'user', content }];

// The networks that snnTorch and Norse saved and ran themselves
// (compile/pytorch/testdata/snn/gen.py). The Norse state_dicts hold only
// weights, so their layers are described in options.layers.
const fixtures = {
  snntorch_leaky: null,
  snntorch_synaptic: null,
  snntorch_rleaky: null,
  snntorch_rsynaptic_v: null,
  norse_lif: [['0', 'linear'], ['1', 'norse.lif'], ['2', 'linear'], ['3', 'norse.lif'], ['4', 'linear'], ['5', 'norse.li']],
  norse_lifrecurrent: [['0', 'norse.lifrecurrent'], ['1', 'linear'], ['2', 'norse.lif']],
};

/** What the library's output layer gave: its spikes summed over the run, or the final membrane of a leaky-integrator readout. */
function reference(ref) {
  const last = Object.keys(ref.layers).sort((a, b) => Number(a) - Number(b)).at(-1);
  const out = ref.layers[last];
  const spiking = out.kind !== 'LICell';
  const want = spiking
    ? out.spikes.slice(0, ref.steps).reduce((sum, s) => sum.map((v, i) => v + s[i]))
    : out.mem[ref.steps - 1];
  return { want, spiking };
}

for (const mode of ['real', 'mock']) {
  describe(`${mode} server`, () => {
    let server;
    let client;
    before(async () => {
      server = await startServer({ mock: mode === 'mock', keys: ['sk-api-a', 'sk-api-b', 'sk-api-c'] });
      client = new Neuro({ baseURL: `${server.url}/v1`, apiKey: 'sk-api-a', maxRetries: 0, timeout: 60_000 });
    });
    after(() => server?.close());

    test('configured from NEURO_BASE_URL and NEURO_API_KEY', async () => {
      const saved = [process.env.NEURO_BASE_URL, process.env.NEURO_API_KEY];
      process.env.NEURO_BASE_URL = `${server.url}/v1`;
      process.env.NEURO_API_KEY = 'sk-api-c';
      try {
        const c = new Neuro();
        assert.equal(c.baseURL, server.url);
        assert.ok((await c.models.list()).data.length > 0);
      } finally {
        for (const [k, v] of [['NEURO_BASE_URL', saved[0]], ['NEURO_API_KEY', saved[1]]]) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
    });

    test('health', async () => {
      const h = await client.health();
      assert.equal(h.status, 'ok');
      assert.equal(h.mock, mode === 'mock');
      assert.ok(h.deployments.some((d) => d.id === 'neuro-1-lite-cpu' && d.status === 'ready'));
    });

    test('models: list, iterate, retrieve (with the neuro-1 alias)', async () => {
      const { object, data } = await client.models.list();
      assert.equal(object, 'list');
      const ids = [];
      for await (const m of client.models.list()) ids.push(m.id);
      assert.deepEqual(ids, data.map((m) => m.id));
      for (const id of ['neuro-1-lite', 'neuro-1-standard', 'neuro-1-heavy']) assert.ok(ids.includes(id), `${id} in ${ids}`);
      const m = await client.models.retrieve('neuro-1');
      assert.equal(m.id, 'neuro-1-standard');
      assert.equal(m.object, 'model');
      assert.equal(m.capabilities.chat, true);
      assert.ok(m.neuromorphic.neurons > 0);
    });

    test('deployments: list and retrieve', async () => {
      const { data } = await client.deployments.list();
      assert.ok(data.some((d) => d.id === 'neuro-1-lite-loihi' && d.device.kind === 'emulator'));
      const d = await client.deployments.retrieve('neuro-1-lite-cpu');
      assert.deepEqual([d.object, d.model, d.status, d.device.name], ['deployment', 'neuro-1-lite', 'ready', 'cpu']);
      assert.equal(typeof d.load.active, 'number');
    });

    for (const via of ['model', 'deployment']) {
      test(`chat through the ${via}: a stream concatenates to the unstreamed answer at temperature 0`, async () => {
        const body = { messages: user('Tell me a story.'), max_tokens: 24, temperature: 0 };
        if (via === 'model') body.model = 'neuro-1-lite';
        else body.deployment = 'neuro-1-lite-loihi';
        const res = await client.chat.completions.create(body);
        assert.equal(res.object, 'chat.completion');
        assert.match(res.id, /^chatcmpl-/);
        assert.equal(res.model, 'neuro-1-lite');
        const choice = res.choices[0];
        assert.equal(choice.message.role, 'assistant');
        assert.ok(choice.message.content.length > 0);
        assert.equal(res.usage.total_tokens, res.usage.prompt_tokens + res.usage.completion_tokens);
        assert.ok(res.usage.neuromorphic.timesteps > 0);

        const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
        assert.ok(stream instanceof Stream);
        let text = '';
        let finish = null;
        let usage = null;
        let role = null;
        const ids = new Set();
        for await (const chunk of stream) {
          ids.add(chunk.id);
          assert.equal(chunk.object, 'chat.completion.chunk');
          assert.equal(usage, null, 'a chunk after the usage chunk');
          if (chunk.usage) {
            assert.equal(chunk.choices.length, 0);
            usage = chunk.usage;
            continue;
          }
          role ??= chunk.choices[0].delta.role;
          text += chunk.choices[0].delta.content ?? '';
          finish = chunk.choices[0].finish_reason ?? finish;
        }
        assert.equal(ids.size, 1);
        assert.equal(role, 'assistant');
        assert.equal(text, choice.message.content);
        assert.equal(finish, choice.finish_reason);
        assert.deepEqual(usage, res.usage);
      });
    }

    test('chat stream with spiking activity', async () => {
      const stream = await client.chat.completions.create({
        model: 'neuro-1-lite',
        messages: user('Hi'),
        max_tokens: 4,
        temperature: 0,
        stream: true,
        neuro: { activity: true },
      });
      let layers = 0;
      for await (const chunk of stream) if (chunk.neuro) layers = Math.max(layers, chunk.neuro.activity.length);
      if (mode === 'real') assert.ok(layers > 0, 'no chunk carried activity');
    });

    test('text completions', async () => {
      const body = { model: 'neuro-1-lite', prompt: 'The fox', max_tokens: 8, temperature: 0 };
      const res = await client.completions.create(body);
      assert.equal(res.object, 'text_completion');
      assert.ok(res.choices[0].text.length > 0);
      const two = await client.completions.create({ ...body, prompt: ['The fox', 'The dog'] });
      assert.deepEqual(two.choices.map((c) => c.index), [0, 1]);
      if (mode === 'real') {
        let text = '';
        for await (const chunk of await client.completions.create({ ...body, stream: true })) text += chunk.choices[0]?.text ?? '';
        assert.equal(text, res.choices[0].text);
      } else {
        await assert.rejects(client.completions.create({ ...body, stream: true }), (e) => e instanceof BadRequestError && e.code === 'stream_not_supported');
      }
    });

    test('snnTorch and Norse networks: compiled, deployed and run give the library’s output', async () => {
      for (const [name, layers] of Object.entries(fixtures)) {
        const ref = JSON.parse(readRepoFile(`compile/pytorch/testdata/snn/${name}.json`, 'utf8'));
        const options = layers ? { layers: layers.map(([n, kind]) => ({ name: n, kind, params: ref.params[n] })), dt: ref.dt } : undefined;
        const file = readRepoFile(`compile/pytorch/testdata/snn/${name}.pt`);
        const net = await client.networks.compile({ file, format: 'pytorch', name, options });
        assert.equal(net.object, 'compiled_network');
        assert.equal(net.status, 'succeeded');
        assert.match(net.id, /^net-/);
        assert.equal(net.source.bytes, file.length);
        assert.equal(net.network.inputs, ref.input[0].length);
        const listed = await client.models.retrieve(net.id);
        assert.equal(listed.owned_by, net.owned_by);

        const dep = await client.deployments.create({ model: net.id, device: 'cpu', wait: true });
        try {
          assert.equal(dep.status, 'ready');
          assert.equal(dep.model, net.id);
          // The input the library ran, one row per step, as a Float32Array per row.
          const rows = ref.input.slice(0, ref.steps).map((r) => Float32Array.from(r));
          const out = await client.deployments.run(dep.id, { inputs: [rows], record: ['spikes'] });
          assert.equal(out.object, 'network.run');
          assert.equal(out.deployment, dep.id);
          assert.equal(out.usage.samples, 1);
          assert.equal(out.usage.timesteps, ref.steps);
          const got = out.outputs[0].spike_counts;
          assert.equal(got.length, net.network.outputs);
          const { want, spiking } = reference(ref);
          if (mode === 'real') {
            if (spiking) assert.deepEqual(got, want, `${name}: ${ref.library} gives ${want}, the server ${got}`);
            else got.forEach((v, i) => assert.ok(Math.abs(v - want[i]) <= 1e-4, `${name}: ${ref.library} gives ${want}, the server ${got}`));
          }
          if (spiking) assert.equal(out.outputs[0].spikes.length, got.reduce((a, b) => a + b, 0));
          // Events as pairs, in compact form and as a raster run alike.
          const events = [[0, 0], [1, 1], [3, 0]];
          const pairs = await client.deployments.run(dep.id, { inputs: [{ events, timesteps: 4 }] });
          const packed = await client.deployments.run(dep.id, { inputs: [packEvents(events, 4)] });
          assert.deepEqual(packed.outputs, pairs.outputs);
          const raster = await client.deployments.run(dep.id, { inputs: [packRaster(events, 4, net.network.inputs)] });
          assert.deepEqual(raster.outputs, pairs.outputs);
        } finally {
          assert.deepEqual(await client.deployments.delete(dep.id), { id: dep.id, object: 'deployment', deleted: true });
        }
        assert.deepEqual(await client.models.delete(net.id), { id: net.id, object: 'model', deleted: true });
      }
    });

    test('breaking out of a stream closes the connection: the deployment goes idle', async () => {
      const dep = 'neuro-1-heavy-cpu';
      const before = (await client.telemetry.retrieve({ deployment: dep })).requests;
      // The bias bans the model's end tokens, and 8 choices with 20
      // alternatives per token make megabytes of events: more than the
      // socket buffers hold, so the server cannot finish before it sees
      // the client go.
      const stream = await client.chat.completions.create({
        model: 'neuro-1-heavy',
        messages: user('Go on'),
        stream: true,
        max_tokens: 4096,
        n: 8,
        logprobs: true,
        top_logprobs: 20,
        logit_bias: endlessBias('neuro-bpe-1k'),
      });
      let n = 0;
      for await (const chunk of stream) {
        assert.equal(chunk.choices[0].finish_reason, null, 'the completion ended before the client left');
        if (++n === 3) {
          assert.ok((await client.deployments.retrieve(dep)).load.active > 0, 'the stream is not being generated');
          break;
        }
      }
      let last;
      await eventually(
        async () => {
          const d = await client.deployments.retrieve(dep);
          const t = await client.telemetry.retrieve({ deployment: dep });
          last = { load: d.load, errors: t.requests.errors - before.errors, completion: t.tokens.completion };
          return d.load.active === 0 && d.load.queued === 0 && t.requests.errors === before.errors + 1;
        },
        5000,
        'the deployment is idle and the request counted as ended by the client',
      ).catch((e) => {
        throw new Error(`${e.message}: ${JSON.stringify(last)}`);
      });
    });

    test('telemetry and metrics', async () => {
      const t = await client.telemetry.retrieve({ window: '1h' });
      assert.equal(t.object, 'telemetry');
      assert.ok(t.requests.total > 0);
      assert.ok(t.requests.by_endpoint['/v1/chat/completions'] > 0);
      assert.ok(t.requests.by_endpoint['/v1/deployments/{deployment_id}/run'] >= Object.keys(fixtures).length);
      assert.ok(t.window.end >= t.window.start);
      const byModel = await client.telemetry.retrieve({ model: 'neuro-1-lite' });
      assert.deepEqual(Object.keys(byModel.by_model), ['neuro-1-lite']);
      // Another key sees none of it.
      const other = await client.withOptions({ apiKey: 'sk-api-b' }).telemetry.retrieve();
      assert.equal(other.requests.total, 0);
      const metrics = await client.metrics();
      assert.match(metrics, /^neuro_http_requests_total\{/m);
    });
  });
}
