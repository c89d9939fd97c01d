// The peer framework of the `peer` scenario (bench/peer/better-auth-server.mjs): installed at run time
// into a scratch directory, never into the project, at pinned versions so that runs compare; run as a
// process of its own on the bench's PostgreSQL server, in a database of its own dropped afterwards.
import { execFile, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** Exact versions: a newer better-auth (or its hash parameters) must be a deliberate change here. */
export const PEER_PACKAGES = { 'better-auth': '1.7.25', pg: '8.23.1' };
const SERVER = new URL('../peer/better-auth-server.mjs', import.meta.url);

/**
 * Installs the peer, creates its database on the service's server and starts it with `users` seeded
 * users (`emailPrefix` + i + '@example.com', all with `password`). `uvThreadpool` is the service's, so
 * both hash on libuv pools of the same size. Resolves { url, pid, version, hashing, stop }.
 */
export async function startPeer(service, { users, password, emailPrefix, uvThreadpool, poolSize, progress }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-peer-'));
  const database = `bench_peer_${randomBytes(4).toString('hex')}`;
  let created = false;
  let child = null;
  const stop = async () => {
    if (child && child.exitCode === null) {
      await new Promise((resolve) => {
        child.once('exit', resolve);
        if (child.connected) child.send({ type: 'stop' });
        else child.kill();
      });
    }
    if (created) await service.db.query(`drop database if exists ${database} with (force)`).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    writeFileSync(
      path.join(dir, 'package.json'),
      JSON.stringify({ private: true, type: 'module', dependencies: PEER_PACKAGES }, null, 2) + '\n',
    );
    if (progress)
      process.stderr.write(
        `  peer: npm install ${Object.entries(PEER_PACKAGES)
          .map(([n, v]) => `${n}@${v}`)
          .join(' ')}…\n`,
      );
    // --ignore-scripts: nothing the peer needs builds at install time; no lock file, audit or funding noise.
    await promisify(execFile)('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'], {
      cwd: dir,
      env: process.env,
      maxBuffer: 16 * 1024 * 1024,
    });
    copyFileSync(SERVER, path.join(dir, 'server.mjs'));
    await service.db.query(`create database ${database}`);
    created = true;
    const url = new URL(service.databaseUrl);
    url.pathname = `/${database}`;
    url.search = '';
    const env = {
      ...process.env,
      NODE_ENV: 'production',
      PEER_SETTINGS: JSON.stringify({
        databaseUrl: url.href,
        secret: randomBytes(32).toString('hex'),
        users,
        password,
        emailPrefix,
        poolSize,
      }),
    };
    if (/^\d+$/.test(String(uvThreadpool))) env.UV_THREADPOOL_SIZE = String(uvThreadpool);
    else delete env.UV_THREADPOOL_SIZE;
    child = fork(path.join(dir, 'server.mjs'), { cwd: dir, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const info = await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`the peer exited before it was ready (code ${code}); see its output above`)));
    });
    return { ...info, pid: child.pid, database, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** `count` sessions of the peer, signing in as the seeded users: the session cookie of each. */
export async function peerSessions(peer, count, emailOf, password) {
  const cookies = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${peer.url}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: peer.url },
      body: JSON.stringify({ email: emailOf(i), password }),
    });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`peer sign-in answered ${res.status} ${body}`);
    const cookie = res.headers.getSetCookie().find((c) => c.includes('session_token='));
    if (!cookie) throw new Error(`peer sign-in set no session cookie: ${res.headers.getSetCookie().join('; ')}`);
    cookies.push(cookie.split(';')[0]);
  }
  return cookies;
}
