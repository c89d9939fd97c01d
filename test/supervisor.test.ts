// The process model: body limits and JSON errors on a real POST route, a crashed HTTP thread replaced
// while the service keeps answering, and the SIGTERM drain of an in-flight request.
import t from 'tap';
import net from 'node:net';
import http from 'node:http';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort, startTestService, testServiceEnv } from './helpers/server.js';
import { createTestDatabase } from './helpers/db.js';
import { adminToken } from './helpers/admin.js';

t.test('bodies over 1 MiB are refused with 413; invalid JSON is 400 bad_json', async (t) => {
  const api = await startTestService();
  t.teardown(() => api.stop());
  const big = await api.request('POST', '/signup', {
    raw: JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(1024 * 1024) }),
    headers: { 'content-type': 'application/json' },
  });
  t.equal(big.status, 413);
  t.strictSame(big.body, { code: 413, error_code: 'request_entity_too_large', msg: 'Request body too large (max 1048576 bytes)' });
  const bad = await api.request('POST', '/signup', { raw: '{"email": ', headers: { 'content-type': 'application/json' } });
  t.equal(bad.status, 400);
  t.equal(bad.body.error_code, 'bad_json');
  t.match(bad.body.msg, /^Could not parse request body as JSON: /);
  const notObject = await api.request('POST', '/signup', { raw: '[1,2]' });
  t.strictSame(notObject.body, {
    code: 400,
    error_code: 'bad_json',
    msg: 'Could not parse request body as JSON: json: cannot unmarshal array into Go value of type api.SignupParams',
  });
  const nul = await api.request('POST', '/signup', { raw: '{"email":"a\\u0000@b.co","password":"secret99"}' });
  t.strictSame(nul.body, {
    code: 400,
    error_code: 'bad_json',
    msg: 'Could not parse request body as JSON: NUL characters (\\u0000) are not allowed',
  });
  const nulQuery = await api.request('GET', '/verify?type=signup&token=%00');
  t.strictSame(nulQuery.body, { code: 400, error_code: 'validation_failed', msg: 'Query parameters cannot contain NUL characters' });
  // A NUL in a path parameter reached PostgreSQL, which cannot hold one in text: a 500 before.
  const nulPath = { code: 400, error_code: 'validation_failed', msg: 'Path parameters cannot contain NUL characters' };
  const admin = await adminToken();
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const res = await api.request(method, '/admin/custom-providers/custom:%00', { token: admin, body: method === 'PUT' ? {} : undefined });
    t.strictSame([res.status, res.body], [400, nulPath], `${method} a custom provider named with a NUL`);
  }
  const still = await api.request('GET', '/health');
  t.equal(still.status, 200, 'the service is unharmed');
});

t.test('a crashed HTTP thread is replaced and logged while the other keeps answering', async (t) => {
  const api = await startTestService({ AUTH_HTTP_WORKERS: '2' });
  t.teardown(() => api.stop());
  const replaced = api.service.nextRestart();
  api.service.failThread(0);
  // While thread 0 is closing and its replacement starts, every new connection is answered by someone.
  // (A keep-alive connection that thread 0 held is closed with it, as when any server closes one.)
  const during = await Promise.all(Array.from({ length: 20 }, () => freshGet(api.service.port, '/health')));
  t.same(during, Array(20).fill(200));
  await replaced;
  t.equal(api.service.restarts, 1);
  const after = await Promise.all(Array.from({ length: 10 }, () => freshGet(api.service.port, '/settings')));
  t.same(after, Array(10).fill(200));
  await api.stop();
  const logs = api.logs();
  t.ok(
    logs.some((l) => l.msg === 'HTTP thread crashed' && l.thread === 0),
    'the crash is logged',
  );
  t.ok(
    logs.some((l) => l.msg === 'replacement HTTP thread listening'),
    'the replacement is logged',
  );
});

t.test('SIGTERM finishes an in-flight request, then the process exits 0', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const port = await freePort();
  const child = spawn(process.execPath, [path.resolve('bin/portcullis.js'), 'serve'], {
    env: { PATH: process.env.PATH, ...testServiceEnv(database.url, port), AUTH_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  // A service that ends before it answers says why, instead of the wait running out. (Handled at once: it
  // also settles when the service ends at the test's close.)
  const endedEarly = exited.then((code) => {
    throw new Error(`the service ended (${code}) before answering:\n${stderr}${stdout.slice(-2000)}`);
  });
  endedEarly.catch(() => {});
  await Promise.race([waitForHealth(port), endedEarly]);

  // Send the headers and half of the body, then SIGTERM, then the rest: the request is in flight.
  const body = JSON.stringify({ email: 'drain@example.com', password: 'secret-password' });
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let answer = '';
  socket.on('data', (chunk) => {
    answer += chunk.toString();
  });
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.write(
    `POST /signup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
  );
  // One HTTP thread handles connections in arrival order: once a later connection is answered, the
  // server has read this request's headers and counts it in flight.
  t.equal(await freshGet(port, '/health', false), 200);
  child.kill('SIGTERM');
  await stopsListening(port); // the drain has begun
  socket.write(body.slice(10));
  await closed;
  t.match(answer, /^HTTP\/1\.1 200 OK/, 'the in-flight request was answered');
  t.match(answer, /drain@example\.com/);
  t.equal(await exited, 0, 'exit code 0');
  const refused = await fetch(`http://127.0.0.1:${port}/health`).then(
    () => 'answered',
    () => 'refused',
  );
  t.equal(refused, 'refused', 'no longer listening');
  // The log is buffered; what was written up to the exit must still come out.
  const lines = stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  t.ok(
    lines.some((l) => l.msg === 'request completed' && l.path === '/signup'),
    "the drained request's line",
  );
  t.same(
    lines.filter((l) => ['draining', 'stopped'].includes(l.msg)).map((l) => l.msg),
    ['draining', 'stopped'],
    "the stop's own lines, last",
  );
});

/**
 * GET over a new connection (no keep-alive pool), resolving the status. A connection the kernel had
 * queued on the crashing thread's listen socket is reset when that socket closes (SO_REUSEPORT), as in
 * any server restart; like a proxy, the client retries such a request once.
 */
function freshGet(port: number, path: string, retry = true): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', (err: NodeJS.ErrnoException) => {
        if (retry && err.code === 'ECONNRESET') freshGet(port, path, false).then(resolve, reject);
        else reject(err);
      });
  });
}

/** Resolves once new connections to `port` are refused (bounded: a failing test must not hang). */
async function stopsListening(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = net.connect(port, '127.0.0.1');
      probe.once('connect', () => {
        probe.destroy();
        resolve(false);
      });
      probe.once('error', () => resolve(true));
    });
    if (refused) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the service never stopped listening');
}

async function waitForHealth(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('service did not come up');
}
