// Loads dist/index.js in a realm that has only what a browser gives a
// module (fetch, streams, URL, timers, text coding, abort signals): no
// process, Buffer, require or node: modules. Run by browser.test.mjs as
//   node --experimental-vm-modules test/web-realm.mjs BASE_URL API_KEY
// it calls the server at BASE_URL and prints what it got as JSON.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const [baseURL, apiKey] = process.argv.slice(2);

const web = {
  fetch, Headers, Request, Response, FormData, Blob, File,
  ReadableStream, WritableStream, TransformStream, TextDecoder, TextEncoder, TextDecoderStream,
  AbortController, AbortSignal, DOMException, Event, EventTarget,
  URL, URLSearchParams, atob, btoa, structuredClone, queueMicrotask,
  setTimeout, clearTimeout, setInterval, clearInterval, console, crypto,
};
const fixture = readFileSync(path.join(dist, '..', '..', '..', 'compile', 'pytorch', 'testdata', 'snn', 'snntorch_leaky.pt'));
const context = vm.createContext({ ...web, fixture: new Uint8Array(fixture) });
vm.runInContext('globalThis.window = globalThis', context);

const modules = new Map();
function load(file) {
  let m = modules.get(file);
  if (!m) {
    m = new vm.SourceTextModule(readFileSync(file, 'utf8'), { identifier: pathToFileURL(file).href, context });
    modules.set(file, m);
  }
  return m;
}
async function link(specifier, referrer) {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) {
    throw new Error(`dist imports ${JSON.stringify(specifier)}: a browser cannot resolve it without a build step`);
  }
  return load(path.resolve(path.dirname(fileURLToPath(referrer.identifier)), specifier));
}

const main = new vm.SourceTextModule(
  `
  import { Neuro, NotFoundError } from './index.js';
  const client = new Neuro({ baseURL: ${JSON.stringify(baseURL)}, apiKey: ${JSON.stringify(apiKey)}, maxRetries: 0 });
  const out = { hasProcess: typeof process !== 'undefined', hasBuffer: typeof Buffer !== 'undefined' };
  out.health = (await client.health()).status;
  out.models = (await client.models.list()).data.map((m) => m.id);
  let text = '';
  const stream = await client.chat.completions.create({ model: 'neuro-1-lite', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8, temperature: 0, stream: true });
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  out.streamed = text;
  out.answer = (await client.chat.completions.create({ model: 'neuro-1-lite', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8, temperature: 0 })).choices[0].message.content;
  const net = await client.networks.compile({ file: new Blob([fixture]), format: 'pytorch' });
  out.compiled = net.network;
  await client.models.delete(net.id);
  try { await client.models.retrieve('gpt-4o'); } catch (e) { out.notFound = e instanceof NotFoundError && e.code; }
  globalThis.result = out;
  `,
  // As if it were a page's module next to index.js.
  { identifier: pathToFileURL(path.join(dist, 'page.js')).href, context },
);
await main.link(link);
await main.evaluate();
console.log(JSON.stringify(context.result));
