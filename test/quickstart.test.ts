// The README's quick start: with nothing configured, `portcullis serve` starts an embedded PostgreSQL in
// ./.data of the current (empty) directory, announces the development setup, answers /health, keeps its
// generated JWT secret across restarts, and stops cleanly on SIGTERM.
import t from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jwtVerify } from 'jose';
import { freePort } from './helpers/server.js';

const BIN = path.resolve('bin/portcullis.js');

async function serveOnce(dir: string, port: number) {
  const child = spawn(process.execPath, [BIN], {
    cwd: dir,
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => {
    output += c;
  });
  child.stderr.on('data', (c) => {
    output += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let health: { status: number; body: any } | null = null;
  for (let i = 0; i < 300 && !health; i++) {
    health = await fetch(`http://127.0.0.1:${port}/health`).then(
      async (r) => ({ status: r.status, body: await r.json() }),
      () => null,
    );
    if (!health) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGTERM');
  return { health, code: await exited, output };
}

t.test('serve from an empty directory, twice', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'quickstart-'));
  chmodSync(dir, 0o755); // the embedded server runs as the postgres user when we are root
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();

  const first = await serveOnce(dir, port);
  t.equal(first.health?.status, 200, 'answers /health');
  t.equal(first.health?.body.name, 'GoTrue');
  t.equal(first.code, 0, 'SIGTERM exits 0');
  if (first.code !== 0) t.comment(first.output);
  t.match(first.output, /DEVELOPMENT SETUP/, 'says loudly that this is a development setup');
  t.ok(readdirSync(path.join(dir, '.data')).includes('pg'), 'the database lives in ./.data');
  const secret = readFileSync(path.join(dir, '.data', 'jwt-secret'), 'utf8');
  t.ok(secret.length >= 32, 'a JWT secret was generated and kept');

  // The banner: plain lines for a person, not a JSON log line with \n escapes in it.
  t.match(first.output, /^\*\*\* Portcullis \d+\.\d+\.\d+: DEVELOPMENT SETUP \(not for production\) \*\*\*$/m);
  t.match(first.output, new RegExp(`^  API URL +http://localhost:${port}$`, 'm'));
  t.match(first.output, /^ {2}environment read +PORT$/m, 'names the variables it read, and only those');
  t.notMatch(first.output, /\\n/, 'no escaped newline anywhere');
  const key = (role: string) => new RegExp(`^  ${role} key +(\\S+)$`, 'm').exec(first.output)?.[1] ?? '';
  for (const role of ['anon', 'service_role']) {
    const { payload } = await jwtVerify(key(role), new TextEncoder().encode(secret.trim()));
    t.equal(payload.role, role, `the ${role} key is signed with the generated secret`);
  }

  const second = await serveOnce(dir, port);
  t.equal(second.health?.status, 200, 'starts again on the same data directory');
  t.equal(second.code, 0);
  t.equal(readFileSync(path.join(dir, '.data', 'jwt-secret'), 'utf8'), secret, 'the secret is reused');
});
