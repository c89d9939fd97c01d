// The template cache's timing rules (REFERENCE 7.3), with an injected clock instead of waiting.
import t from 'tap';
import { TemplateCache, TEMPLATE_MAX_AGE_MS, TEMPLATE_RETRY_AFTER_MS } from '../dist/server/delivery/mail/template-cache.js';
import { captureLog } from './helpers/log.js';
import { startTemplateServer, type TemplateServer } from './helpers/template-server.js';

let server: TemplateServer;
t.before(async () => {
  server = await startTemplateServer();
});
t.teardown(() => server.close());

function cacheAt(clock: { now: number }) {
  return new TemplateCache({ siteUrl: server.baseUrl, log: captureLog().log, now: () => clock.now });
}

t.test('a fetched template is reused for 10 minutes without asking again', async (t) => {
  server.set('/fresh.html', 'v1');
  const clock = { now: 0 };
  const cache = cacheAt(clock);
  t.equal(await cache.get('/fresh.html'), 'v1');
  server.set('/fresh.html', 'v2');
  clock.now = TEMPLATE_MAX_AGE_MS - 1;
  t.equal(await cache.get('/fresh.html'), 'v1');
  t.equal(server.requests.filter((p) => p === '/fresh.html').length, 1);
});

t.test('after 10 minutes the stale copy is served while the reload runs, then the new one', async (t) => {
  server.set('/stale.html', 'v1');
  const clock = { now: 0 };
  const cache = cacheAt(clock);
  await cache.get('/stale.html');
  server.set('/stale.html', 'v2');
  clock.now = TEMPLATE_MAX_AGE_MS;
  t.equal(await cache.get('/stale.html'), 'v1', 'no request waits for the reload');
  await cache.idle();
  t.equal(await cache.get('/stale.html'), 'v2');
});

t.test('a failed reload keeps the previous copy and is retried after 10 seconds', async (t) => {
  server.set('/flaky.html', 'good');
  const clock = { now: 0 };
  const cache = cacheAt(clock);
  await cache.get('/flaky.html');
  server.set('/flaky.html', { status: 500, body: 'oops' });
  clock.now = TEMPLATE_MAX_AGE_MS;
  await cache.get('/flaky.html');
  await cache.idle();
  const fetches = () => server.requests.filter((p) => p === '/flaky.html').length;
  t.equal(fetches(), 2);
  clock.now += TEMPLATE_RETRY_AFTER_MS - 1;
  t.equal(await cache.get('/flaky.html'), 'good', 'previous copy kept');
  t.equal(fetches(), 2, 'no retry before 10 s');
  server.set('/flaky.html', 'better');
  clock.now += 1;
  await cache.get('/flaky.html');
  await cache.idle();
  t.equal(await cache.get('/flaky.html'), 'better');
});

t.test('with no copy at all, a failure means null (the default) until the retry', async (t) => {
  const clock = { now: 0 };
  const cache = cacheAt(clock);
  t.equal(await cache.get('/absent.html'), null);
  server.set('/absent.html', 'arrived');
  clock.now = TEMPLATE_RETRY_AFTER_MS - 1;
  t.equal(await cache.get('/absent.html'), null);
  clock.now = TEMPLATE_RETRY_AFTER_MS;
  t.equal(await cache.get('/absent.html'), 'arrived');
});

t.test('concurrent first requests share one fetch', async (t) => {
  server.set('/shared.html', 'once');
  const cache = cacheAt({ now: 0 });
  t.same(await Promise.all([cache.get('/shared.html'), cache.get('/shared.html'), cache.get('/shared.html')]), ['once', 'once', 'once']);
  t.equal(server.requests.filter((p) => p === '/shared.html').length, 1);
});

t.test('MAILER_TEMPLATE_MAX_SIZE, _MAX_AGE and _RETRY_INTERVAL replace the three limits', async (t) => {
  const clock = { now: 0 };
  const cache = new TemplateCache({
    siteUrl: server.baseUrl,
    log: captureLog().log,
    now: () => clock.now,
    maxBytes: 16,
    maxAgeMs: 1000,
    retryAfterMs: 200,
  });
  server.set('/small.html', 'sixteen bytes ok');
  server.set('/big.html', 'seventeen bytes!!');
  t.equal(await cache.get('/small.html'), 'sixteen bytes ok', 'a template of the limit is read');
  t.equal(await cache.get('/big.html'), null, 'one byte more is refused: the default is used');

  server.set('/big.html', 'fits now');
  clock.now = 199;
  t.equal(await cache.get('/big.html'), null, 'no retry before the interval');
  clock.now = 200;
  t.equal(await cache.get('/big.html'), 'fits now', 'retried at the interval');

  server.set('/small.html', 'v2');
  clock.now = 999;
  t.equal(await cache.get('/small.html'), 'sixteen bytes ok', 'still fresh before its age');
  clock.now = 1000;
  await cache.get('/small.html');
  await cache.idle();
  t.equal(await cache.get('/small.html'), 'v2', 'fetched again at its age');
});
