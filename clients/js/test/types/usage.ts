// Type-checked, never run (dist.test.mjs runs tsc --noEmit on it): the
// declarations in dist/ give a TypeScript user the types the README promises.
import Neuro, {
  NeuroError,
  NotFoundError,
  RateLimitError,
  Stream,
  packEvents,
  packRaster,
  type ChatCompletion,
  type ChatCompletionChunk,
  type Completion,
  type CompiledNetwork,
  type Deployment,
  type PackedEventSample,
  type RasterSample,
  type Model,
  type Response,
  type ResponseStreamEvent,
  type Run,
  type Telemetry,
} from 'neuro-client';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(): T | void {}

export async function usage(client: Neuro): Promise<void> {
  const messages = [{ role: 'user' as const, content: 'Hi' }];
  const r = await client.chat.completions.create({ model: 'neuro-1-lite', messages, max_tokens: 32 });
  expectType<Equal<typeof r, ChatCompletion>>();
  const content: string = r.choices[0]!.message.content;
  const prompt: number = r.usage.prompt_tokens;

  const s = await client.chat.completions.create({ model: 'neuro-1-lite', messages, stream: true });
  expectType<Equal<typeof s, Stream<ChatCompletionChunk>>>();
  for await (const chunk of s) {
    const delta: string | undefined = chunk.choices[0]?.delta.content;
    void delta;
  }
  const viaDeployment = await client.chat.completions.create({ deployment: 'neuro-1-lite-loihi', messages });
  expectType<Equal<typeof viaDeployment, ChatCompletion>>();

  const c = await client.completions.create({ model: 'neuro-1-lite', prompt: 'Once', max_tokens: 8 });
  expectType<Equal<typeof c, Completion>>();
  const cs = await client.completions.create({ model: 'neuro-1-lite', prompt: ['a', 'b'], stream: true });
  expectType<Equal<typeof cs, Stream<Completion>>>();

  const models: Model[] = (await client.models.list()).data;
  for await (const m of client.models.list()) expectType<Equal<typeof m, Model>>();

  const net = await client.networks.compile({ file: new Uint8Array(8), format: 'pytorch', options: { timesteps: 16 } });
  expectType<Equal<typeof net, CompiledNetwork>>();
  const dep = await client.deployments.create({ model: net.id, device: 'cpu', wait: { timeout: 60_000 } });
  expectType<Equal<typeof dep, Deployment>>();
  const out = await client.deployments.run(dep.id, { inputs: [new Float32Array(8), [[1, 2]], { events: [[0, 1]], timesteps: 4 }], record: ['spikes'] });
  expectType<Equal<typeof out, Run>>();
  const raster = packRaster([[0, 1]], 4, 8);
  expectType<Equal<typeof raster, RasterSample>>();
  const packed: PackedEventSample = packEvents([[0, 1]], 4);
  await client.deployments.run(dep.id, { inputs: [raster, packed] });
  const counts: number[] = out.outputs[0]!.spike_counts;
  const deleted: true = (await client.deployments.delete(dep.id)).deleted;
  const tel = await client.telemetry.retrieve({ window: '5m' });
  expectType<Equal<typeof tel, Telemetry>>();
  const health = await client.health();
  const status: 'ok' | 'unavailable' = health.status;

  try {
    await client.models.retrieve('gpt-4o', { timeout: 1000, maxRetries: 0 });
  } catch (e) {
    if (e instanceof NotFoundError || e instanceof RateLimitError) {
      const fields: [number | undefined, string | undefined, string | null, string | null, string] = [e.status, e.type, e.code, e.param, e.message];
      void fields;
    }
    if (e instanceof NeuroError) void e.requestID;
  }
  const first = await client.responses.create({ model: 'neuro-1-heavy', input: 'Hi', instructions: 'Be brief.' });
  expectType<Equal<typeof first, Response>>();
  const next = await client.responses.create({
    model: 'neuro-1-heavy',
    input: [{ role: 'user', content: [{ type: 'input_text', text: 'And?' }] }],
    previous_response_id: first.id,
  });
  const cached: number | undefined = next.usage?.input_tokens_details.cached_tokens;
  const outText: string = next.output_text;
  const rs = await client.responses.create({ model: 'neuro-1-heavy', input: 'Hi', stream: true });
  expectType<Equal<typeof rs, Stream<ResponseStreamEvent>>>();
  for await (const ev of rs) {
    if (ev.type === 'response.output_text.delta') {
      const piece: string = ev.delta;
      void piece;
    } else if (ev.type === 'response.completed') {
      expectType<Equal<typeof ev.response, Response>>();
    }
  }
  const gone: true = (await client.responses.delete(first.id)).deleted;
  const chatCached: number | undefined = r.usage.prompt_tokens_details?.cached_tokens;
  void [cached, outText, gone, chatCached];

  // @ts-expect-error: a stream is not a ChatCompletion
  const wrong: ChatCompletion = await client.chat.completions.create({ model: 'm', messages, stream: true });
  void [content, prompt, models, counts, deleted, status, wrong];
}

void new Neuro({ baseURL: 'http://127.0.0.1:8080', apiKey: 'sk', timeout: 5000, maxRetries: 2 });
