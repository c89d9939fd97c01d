// A client that closes its connection before the answer cancels the request's work, as a deadline does:
// its queued hash is dropped instead of run (a flood's abandoned logins cost no argon2 time), and its log
// line says why it has no answer. The deadline is set far beyond the test, so only the closed connection
// can be what drops them.
import net from 'node:net';
import t from 'tap';
import { startTestService, type TestService } from './helpers/server.js';
import { scrapeMetrics, total } from './helpers/exposition.js';

const REQUESTS = 12;
const CRYPTO_THREADS = 2;

const api = await startTestService({
  AUTH_CRYPTO_WORKERS: String(CRYPTO_THREADS),
  // Slow hashes (hundreds of ms each), so the queue is still full when the clients leave.
  AUTH_PASSWORD_HASH_MEMORY_KIB: '19456',
  AUTH_PASSWORD_HASH_TIME_COST: '20',
  AUTH_PASSWORD_HASH_MAX_QUEUE: String(REQUESTS),
  AUTH_API_MAX_REQUEST_DURATION: '300s',
  AUTH_METRICS_ENABLED: 'true',
  AUTH_METRICS_EXPORTER: 'prometheus',
});
t.teardown(() => api.stop());

async function cryptoStats(api: TestService): Promise<Record<string, number>> {
  const scrape = await scrapeMetrics(api.service.metricsPort);
  const read = (name: string) => total(scrape, `auth_crypto_pool_${name}`);
  return {
    running: read('running_tasks'),
    queued: read('queued_tasks'),
    completed: read('completed_tasks_total'),
    dropped: read('dropped_tasks_total'),
  };
}

/** Polls until `done` holds (or gives up after `limitMs`), answering the last stats read. */
async function until(done: (s: Record<string, number>) => boolean, limitMs: number): Promise<Record<string, number>> {
  const giveUp = Date.now() + limitMs;
  for (;;) {
    const stats = await cryptoStats(api);
    if (done(stats) || Date.now() > giveUp) return stats;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function passwordGrant(): net.Socket {
  const body = JSON.stringify({ email: 'nobody@example.com', password: 'secret99' });
  const socket = net.connect(Number(new URL(api.url).port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST /token?grant_type=password HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
}

t.test('logins whose clients left are dropped from the hashing queue, not hashed', async (t) => {
  const before = await cryptoStats(api);
  const sockets = Array.from({ length: REQUESTS }, passwordGrant);
  const waiting = await until((s) => s.running === CRYPTO_THREADS && s.queued === REQUESTS - CRYPTO_THREADS, 30_000);
  t.equal(waiting.queued, REQUESTS - CRYPTO_THREADS, 'every login beyond the threads is queued');
  for (const socket of sockets) socket.destroy();

  const after = await until((s) => s.running === 0 && s.queued === 0, 60_000);
  t.equal(after.queued, 0, 'the queue emptied');
  const dropped = after.dropped - before.dropped;
  const completed = after.completed - before.completed;
  t.equal(dropped + completed, REQUESTS, 'every login was either hashed or dropped');
  // Those already running finish; at most a couple more may have started between the scrape and the close.
  t.ok(dropped >= REQUESTS - CRYPTO_THREADS - 2, `the queued logins were dropped (${dropped} dropped, ${completed} hashed)`);

  const answered = await fetch(`${api.url}/health`);
  t.equal(answered.status, 200, 'the service carries on');
});

t.test('each abandoned request is logged as closed by its client, with no error line', async (t) => {
  await api.stop();
  const lines = api.logs().filter((l) => l.route === '/token');
  t.equal(lines.length, REQUESTS, 'one request line per login');
  for (const line of lines) {
    t.equal(line.status, 499);
    t.equal(line.error_code, 'client_closed_request');
  }
  t.equal(api.logs().filter((l) => l.level === 'error' || l.level === 'fatal').length, 0, 'no error was logged');
});
