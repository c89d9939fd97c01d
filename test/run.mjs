#!/usr/bin/env node
// The test command (`npm test`): build, provide a PostgreSQL server (the embedded one, or DATABASE_URL),
// run every tap test file against it, and end with the line "N passed, N failed".
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const bin = (name) => path.join(root, 'node_modules', '.bin', name);

const build = spawnSync(bin('tsc'), ['-p', root], { stdio: 'inherit' });
if (build.status !== 0) {
  console.log('0 passed, 1 failed');
  process.exit(1);
}

let databaseUrl = process.env.DATABASE_URL;
let embedded = null;
let dataDir = null;
if (!databaseUrl) {
  const { startEmbeddedPostgres } = await import(path.join(root, 'dist/db/embedded/server.js'));
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-test-'));
  embedded = await startEmbeddedPostgres({ dataDir, log: () => {} });
  databaseUrl = embedded.url;
  console.log(`# embedded PostgreSQL for the tests in ${dataDir}`);
} else {
  console.log(`# tests against DATABASE_URL (${databaseUrl.replace(/\/\/[^@]*@/, '//***@')})`);
}

const env = { ...process.env, TEST_DATABASE_URL: databaseUrl };
delete env.DATABASE_URL; // each test builds its own configuration; nothing leaks in from the shell
const tap = spawn(bin('tap'), process.argv.slice(2), { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
let summary = null;
let tail = '';
tap.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString()).slice(-4096);
  const found = [...tail.matchAll(/^# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?[^}]*\}$/gm)].pop();
  if (found) summary = { total: Number(found[1]), pass: Number(found[2]), fail: Number(found[3] ?? 0) };
});
const code = await new Promise((resolve) => tap.on('close', (c) => resolve(c ?? 1)));

await embedded?.stop();
if (dataDir) rmSync(dataDir, { recursive: true, force: true });
const failed = summary ? summary.fail : 1;
console.log(`${summary?.pass ?? 0} passed, ${code !== 0 && failed === 0 ? 1 : failed} failed`);
process.exit(code === 0 ? 0 : 1);
