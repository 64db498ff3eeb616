// dist/ is committed so that users run no build step: it must be exactly
// what the TypeScript compiler writes from src/ now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { clientDir } from './helpers.mjs';
import * as neuro from '../dist/index.js';

function files(dir, prefix = '') {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

const tsc = path.join(clientDir, 'node_modules', 'typescript', 'bin', 'tsc');

test('dist/ is what `npm run build` writes from src/', { skip: !existsSync(tsc) && 'typescript is not installed (npm ci)' }, () => {
  const out = mkdtempSync(path.join(tmpdir(), 'neuro-client-dist-'));
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--outDir', out], { cwd: clientDir, stdio: 'pipe' });
    const dist = path.join(clientDir, 'dist');
    assert.deepEqual(files(dist), files(out), 'the files differ: run npm run build');
    for (const f of files(out)) {
      assert.equal(readFileSync(path.join(dist, f), 'utf8'), readFileSync(path.join(out, f), 'utf8'), `dist/${f} is stale: run npm run build`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});

test('package.json: the version, the exports and no runtime dependency', async () => {
  const pkg = JSON.parse(readFileSync(path.join(clientDir, 'package.json'), 'utf8'));
  assert.equal(pkg.name, 'neuro-client');
  assert.equal(pkg.type, 'module');
  assert.equal(pkg.version, neuro.VERSION);
  assert.equal(pkg.dependencies, undefined);
  assert.deepEqual(pkg.exports['.'], { types: './dist/index.d.ts', default: './dist/index.js' });
  const changelog = readFileSync(path.join(clientDir, 'CHANGELOG.md'), 'utf8');
  assert.match(changelog, new RegExp(`^## ${pkg.version.replaceAll('.', '\\.')}\\b`, 'm'), 'CHANGELOG.md has no entry for this version');
  // Resolved by name, as a user's import is.
  const byName = await import('neuro-client');
  assert.equal(byName.Neuro, neuro.Neuro);
  assert.equal(byName.default, neuro.Neuro);
});

test('dist imports only its own files', () => {
  for (const f of files(path.join(clientDir, 'dist')).filter((f) => f.endsWith('.js'))) {
    const src = readFileSync(path.join(clientDir, 'dist', f), 'utf8');
    for (const m of src.matchAll(/\b(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]/g)) {
      const spec = m[1] ?? m[2];
      assert.ok(spec.startsWith('./') || spec.startsWith('../'), `dist/${f} imports ${spec}`);
      assert.ok(spec.endsWith('.js'), `dist/${f} imports ${spec} without its extension`);
    }
  }
});

test('the declarations type-check a TypeScript user’s code (test/types/usage.ts)', { skip: !existsSync(tsc) && 'typescript is not installed (npm ci)' }, () => {
  execFileSync(process.execPath, [tsc, '-p', path.join('test', 'types', 'tsconfig.json')], { cwd: clientDir, stdio: 'pipe' });
});
