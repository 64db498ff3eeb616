// The package loads with no build step where only web APIs exist: dist/
// imports nothing but its own files, and runs in a realm without Node's
// globals (test/web-realm.mjs) against a real server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { clientDir, startServer } from './helpers.mjs';

let server;
before(async () => {
  server = await startServer({ mock: true, keys: ['sk-web'] });
});
after(() => server?.close());

test('dist runs in a realm with only web APIs (no process, Buffer or node: imports)', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--experimental-vm-modules', '--no-warnings', path.join(clientDir, 'test', 'web-realm.mjs'), server.url, 'sk-web'],
    { timeout: 60_000 },
  );
  const out = JSON.parse(stdout);
  assert.equal(out.hasProcess, false);
  assert.equal(out.hasBuffer, false);
  assert.equal(out.health, 'ok');
  assert.ok(out.models.includes('neuro-1-lite'));
  assert.ok(out.answer.length > 0);
  assert.equal(out.streamed, out.answer);
  assert.deepEqual([out.compiled.inputs, out.compiled.outputs], [8, 4]);
  assert.equal(out.notFound, 'model_not_found');
});
