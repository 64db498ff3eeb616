// Test harness: builds examples/server (once per process, unless
// NEURO_SERVER_BIN names a binary already built), starts it on a free
// loopback port in mock or real mode, and serves small node:http stubs for
// the behaviours a real server cannot be asked for.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const clientDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const repoRoot = path.resolve(clientDir, '..', '..');

let binary;

/** The path of the server binary: NEURO_SERVER_BIN, else one built now with go build. */
export function serverBinary() {
  if (process.env.NEURO_SERVER_BIN) return Promise.resolve(process.env.NEURO_SERVER_BIN);
  binary ??= (async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'neuro-client-js-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    const out = path.join(dir, 'server');
    const env = { ...process.env, PATH: `${process.env.PATH}:/usr/local/go/bin` };
    await promisify(execFile)('go', ['build', '-o', out, './examples/server'], { cwd: repoRoot, env, maxBuffer: 16 << 20 });
    return out;
  })();
  return binary;
}

/**
 * Starts examples/server on 127.0.0.1 with a free port. keys become
 * NEURO_API_KEYS; the server is killed when the test process exits.
 */
export async function startServer({ mock = false, keys = ['sk-test'], args = [] } = {}) {
  const bin = await serverBinary();
  const argv = ['-addr', '127.0.0.1:0', '-console=false', ...(mock ? ['-mock'] : []), ...args];
  const child = spawn(bin, argv, {
    cwd: repoRoot,
    env: { ...process.env, NEURO_API_KEYS: keys.join(',') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const kill = () => child.kill('SIGKILL');
  process.on('exit', kill);
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (s) => {
    stderr = (stderr + s).slice(-8000);
  });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in 120 s:\n${stderr}`)), 120_000);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}:\n${stderr}`)));
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const m = /^Serving on (http:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
  });
  return {
    url,
    keys,
    mock,
    stderr: () => stderr,
    close() {
      process.off('exit', kill);
      kill();
    },
  };
}

/** Starts a node:http server whose handler is given; it returns its URL and the requests it received. */
export async function startStub(handler) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (s) => (body += s));
    req.on('end', () => {
      const r = { method: req.method, url: req.url, headers: req.headers, body, at: Date.now() };
      requests.push(r);
      handler(req, res, r, requests.length);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

/** Writes a JSON answer. */
export function sendJSON(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** An error body in the server's shape. */
export function errorBody(message, type, code = null, param = null) {
  return { error: { message, type, param, code } };
}

/** Reads a file of the repository. */
export function readRepoFile(rel, encoding) {
  return readFileSync(path.join(repoRoot, rel), encoding);
}

/**
 * A logit_bias that bans every special token of a built-in model's
 * tokenizer (the end of turn and of text among them), so that a
 * completion runs to its max_tokens.
 */
export function endlessBias(tokenizer) {
  const tok = JSON.parse(readRepoFile(`models/tokenizers/${tokenizer}.json`, 'utf8'));
  return Object.fromEntries(tok.added_tokens.filter((t) => t.special).map((t) => [String(t.id), -100]));
}

/** Polls fn until it returns a truthy value, or throws after ms. */
export async function eventually(fn, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
