// `portcullis keys generate` and `portcullis token` run as the operator runs them (bin/portcullis.js in a
// child process): the key set loads as JWT_KEYS, and the printed service_role key opens the admin API.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { loadConfig } from '../dist/server/config/load.js';
import { startTestService, JWT_SECRET } from './helpers/server.js';
import { runPortcullis } from './helpers/cli.js';

const cwd = mkdtempSync(path.join(os.tmpdir(), 'portcullis-cli-')); // no .env there
// Only the settings the test gives: none of the runner's AUTH_/GOTRUE_ variables leak in.
const baseEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^(AUTH_|GOTRUE_)/.test(name) && name !== 'DATABASE_URL'),
);

function run(args: string[], env: Record<string, string> = {}) {
  const res = runPortcullis(args, { cwd, env: { ...baseEnv, ...env } });
  return { status: res.status, stdout: res.stdout.trim(), stderr: res.stderr.trim() };
}

t.test('keys generate prints a key set of one signing key that loads as JWT_KEYS', async (t) => {
  for (const [args, alg, kty] of [
    [[], 'ES256', 'EC'],
    [['--alg', 'ES256'], 'ES256', 'EC'],
    [['--alg', 'RS256'], 'RS256', 'RSA'],
    [['--alg', 'EdDSA'], 'EdDSA', 'OKP'],
    [['--alg', 'HS256'], 'HS256', 'oct'],
  ] as const) {
    const res = run(['keys', 'generate', ...args]);
    t.equal(res.status, 0, alg);
    const keys = JSON.parse(res.stdout) as Array<Record<string, unknown>>;
    t.equal(keys.length, 1);
    t.match(keys[0], { kty, alg, key_ops: ['sign', 'verify'], kid: /^[0-9a-f-]{36}$/ });
    const config = loadConfig({ envFile: null, env: { AUTH_JWT_KEYS: res.stdout } });
    t.same(config.jwt.keys, keys, 'accepted by the config loader');
  }
  const bad = run(['keys', 'generate', '--alg', 'none']);
  t.equal(bad.status, 2);
  t.match(bad.stderr, /^usage: portcullis keys generate/);
});

t.test('token prints anon and service_role keys signed with the configured key, which the service accepts', async (t) => {
  const keySet = run(['keys', 'generate', '--alg', 'RS256']).stdout;
  const signer = (JSON.parse(keySet) as Array<{ kid: string }>)[0];
  const env = { AUTH_JWT_KEYS: keySet, AUTH_JWT_SECRET: JWT_SECRET };
  const service = run(['token', '--role', 'service_role'], env);
  t.equal(service.status, 0, service.stderr);
  t.same(decodeProtectedHeader(service.stdout), { alg: 'RS256', kid: signer.kid, typ: 'JWT' });
  const claims = decodeJwt(service.stdout);
  t.equal(claims.role, 'service_role');
  t.equal(claims.exp! - claims.iat!, 10 * 365 * 86_400, 'ten years by default');
  const anon = run(['token', '--role', 'anon', '--exp', '30d'], env);
  t.equal(decodeJwt(anon.stdout).role, 'anon');
  t.equal(decodeJwt(anon.stdout).exp! - decodeJwt(anon.stdout).iat!, 30 * 86_400);

  for (const args of [['token'], ['token', '--role', 'admin'], ['token', '--role', 'anon', '--exp', 'soon']]) {
    const res = run(args, env);
    t.equal(res.status, 2, args.join(' '));
    t.match(res.stderr, /^usage: portcullis token/);
  }
  const badKeys = run(['token', '--role', 'anon'], { ...env, AUTH_JWT_KEYS: '[{"kty":"EC","kid":"broken","key_ops":["sign","verify"]}]' });
  t.equal(badKeys.status, 1);
  t.match(badKeys.stderr, /AUTH_JWT_KEYS: key "broken"/);

  const api = await startTestService({ AUTH_JWT_KEYS: keySet });
  t.teardown(() => api.stop());
  t.equal((await api.request('GET', '/admin/users', { token: service.stdout })).status, 200, 'the service_role key opens the admin API');
  t.equal((await api.request('GET', '/admin/users', { token: anon.stdout })).body.error_code, 'not_admin');
});
