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
const template = await createTemplate(databaseUrl);
if (template) env.TEST_TEMPLATE_DATABASE = template.name;
const tap = spawn(bin('tap'), process.argv.slice(2), { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
let summary = null;
let tail = '';
const failures = collectFailures();
tap.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  failures.add(chunk.toString());
  tail = (tail + chunk.toString()).slice(-4096);
  const found = [...tail.matchAll(/^# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?[^}]*\}$/gm)].pop();
  if (found) summary = { total: Number(found[1]), pass: Number(found[2]), fail: Number(found[3] ?? 0) };
});
const code = await new Promise((resolve) => tap.on('close', (c) => resolve(c ?? 1)));
// A CI log is often read from its end only: the failures are repeated there, next to the count.
if (failures.lines.length > 0) console.log(['# the failures, again:', ...failures.lines].join('\n'));

await template?.drop();
await embedded?.stop();
if (dataDir) rmSync(dataDir, { recursive: true, force: true });
const failed = summary ? summary.fail : 1;
console.log(`${summary?.pass ?? 0} passed, ${code !== 0 && failed === 0 ? 1 : failed} failed`);
process.exit(code === 0 ? 0 : 1);

/**
 * One database migrated into `auth` for the whole run, which test/helpers/db.ts copies for each service
 * a test starts (CREATE DATABASE ... TEMPLATE). Without it (it could not be made) every copy is migrated
 * on its own, as when a file is run with tap directly: slower, and the same.
 */
async function createTemplate(adminUrl) {
  const { default: pg } = await import('pg');
  const { migrate } = await import(path.join(root, 'dist/db/migrate.js'));
  const name = `portcullis_template_${process.pid}`;
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  try {
    await admin(`create database "${name}"`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    await migrate(url.toString(), 'auth');
    return { name, drop: () => admin(`drop database if exists "${name}" with (force)`).catch(() => {}) };
  } catch (err) {
    console.log(`# no template database (${err.message}): each test database is migrated on its own`);
    await admin(`drop database if exists "${name}" with (force)`).catch(() => {});
    return null;
  }
}

/**
 * The "not ok" lines of a tap stream, each with the lines of its diagnostic block that follow it (at most
 * a screenful per failure, and a bounded total, so a run that fails everywhere cannot flood the log).
 */
function collectFailures() {
  const lines = [];
  let partial = '';
  let following = 0;
  return {
    lines,
    add(text) {
      const parts = (partial + text).split('\n');
      partial = parts.pop();
      for (const line of parts) {
        if (lines.length >= 400) return;
        if (/^\s*not ok \d+/.test(line)) {
          lines.push(line);
          following = 25;
        } else if (following > 0) {
          following -= 1;
          if (/^\s*(ok|not ok) \d+|^\s*# Subtest/.test(line)) following = 0;
          else lines.push(line);
        }
      }
    },
  };
}
