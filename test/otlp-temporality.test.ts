// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: the pushed counters and histograms as deltas since the
// previous push (`delta`), as deltas for those counted as things happen only (`lowmemory`), and cumulative for
// a value the original's exporters do not know, as they ignore it. Three services push OTLP/JSON to one real
// HTTP receiver, each under its own path. The default, cumulative: otlp-metrics.test.ts.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService, type TestService } from './helpers/server.js';

const exports: Array<{ path: string | undefined; body: any }> = [];
let arrived: () => void = () => {};
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    exports.push({ path: req.url, body: JSON.parse(Buffer.concat(chunks).toString()) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    arrived();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

async function service(name: string, preference: string): Promise<TestService> {
  const api = await startTestService({
    AUTH_HTTP_WORKERS: '2',
    AUTH_METRICS_ENABLED: 'true',
    AUTH_METRICS_EXPORTER: 'opentelemetry',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${base}/${name}/v1/metrics`,
    OTEL_METRIC_EXPORT_INTERVAL: '100',
    OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: preference,
  });
  t.teardown(() => api.stop());
  return api;
}

type Metric = { name: string; sum?: any; gauge?: any; histogram?: any };
const metricsOf = (body: any): Metric[] => body.resourceMetrics.flatMap((r: any) => r.scopeMetrics.flatMap((s: any) => s.metrics));
const attrs = (list: any[] = []) => Object.fromEntries(list.map((a: any) => [a.key, Object.values(a.value)[0]]));
const value = (p: any) => Number(p.asDouble ?? p.asInt ?? 0);
const pushedBy = (name: string, from: number) => exports.slice(from).filter((e) => e.path === `/${name}/v1/metrics`);
const metric = (e: { body: any }, name: string) => metricsOf(e.body).find((m) => m.name === name);

/** The GET /settings answers counted in one export (the original's request counter). */
const settingsCounted = (e: { body: any }) =>
  (metric(e, 'http_status_codes')?.sum.dataPoints ?? [])
    .filter((p: any) => attrs(p.attributes)['http.route'] === '/settings' && attrs(p.attributes).code === '200')
    .reduce((sum: number, p: any) => sum + value(p), 0);
/** The GET /settings answers timed in one export (the histogram's count). */
const settingsTimed = (e: { body: any }) =>
  (metric(e, 'http_server_duration_seconds')?.histogram.dataPoints ?? [])
    .filter((p: any) => attrs(p.attributes).http_route === '/settings')
    .reduce((sum: number, p: any) => sum + Number(p.count), 0);

/** Waits for the pushes of `name` since `from` until `done` holds for them. */
async function pushesUntil(name: string, from: number, done: (pushes: typeof exports) => boolean): Promise<typeof exports> {
  for (;;) {
    const pushes = pushedBy(name, from);
    if (done(pushes)) return pushes;
    await new Promise<void>((resolve) => (arrived = resolve));
  }
}
const total = (pushes: typeof exports, of: (e: { body: any }) => number) => pushes.reduce((sum, e) => sum + of(e), 0);

async function getSettings(api: TestService, times: number) {
  for (let i = 0; i < times; i++) t.equal((await api.request('GET', '/settings')).status, 200);
}

const delta = await service('delta', ' DELTA ');
const lowMemory = await service('lowmemory', 'LowMemory');
const unknown = await service('unknown', 'bogus');

t.test('delta: each push carries only what was added since the one before', async (t) => {
  const first = exports.length;
  await getSettings(delta, 2);
  const before = await pushesUntil('delta', first, (p) => total(p, settingsCounted) >= 2 && total(p, settingsTimed) >= 2);
  t.equal(total(before, settingsCounted), 2, 'the first two answers, counted once');
  t.equal(total(before, settingsTimed), 2, 'and timed once');

  const second = exports.length;
  await getSettings(delta, 3);
  const after = await pushesUntil('delta', second, (p) => total(p, settingsCounted) >= 3 && total(p, settingsTimed) >= 3);
  t.equal(total(after, settingsCounted), 3, 'the next push counts the three new answers, not the five');
  t.equal(total(after, settingsTimed), 3, 'and times them alone');
  const counted = after.find((e) => settingsCounted(e) > 0)!;
  t.equal(metric(counted, 'http_status_codes')!.sum.aggregationTemporality, 1, 'a counter, delta');
  t.equal(metric(counted, 'http_status_codes')!.sum.isMonotonic, true);
  const timed = after.find((e) => settingsTimed(e) > 0)!;
  t.equal(metric(timed, 'http_server_duration_seconds')!.histogram.aggregationTemporality, 1, 'a histogram, delta');
  t.ok(metric(counted, 'gotrue_running')?.gauge, 'a gauge stays a gauge');

  // Two pushes one after the other: the second starts where the first ended.
  const pushes = await pushesUntil('delta', second, (p) => p.length >= 2);
  const completed = pushes.slice(0, 2).map((e) => metric(e, 'auth_crypto_pool_completed_tasks')!.sum);
  t.equal(completed[1].aggregationTemporality, 1, 'an observed counter, delta too');
  t.equal(String(completed[1].dataPoints[0].startTimeUnixNano), String(completed[0].dataPoints[0].timeUnixNano));
});

t.test('lowmemory: delta for what is counted as it happens, cumulative for what is read from a running total', async (t) => {
  const from = exports.length;
  await getSettings(lowMemory, 1);
  const pushes = await pushesUntil('lowmemory', from, (p) => total(p, settingsCounted) >= 1 && total(p, settingsTimed) >= 1);
  const counted = pushes.find((e) => settingsCounted(e) > 0)!;
  t.equal(metric(counted, 'http_status_codes')!.sum.aggregationTemporality, 1, 'a counter, delta');
  t.equal(metric(counted, 'auth_crypto_pool_completed_tasks')!.sum.aggregationTemporality, 2, 'an observed counter, cumulative');
  const timed = pushes.find((e) => settingsTimed(e) > 0)!;
  t.equal(metric(timed, 'http_server_duration_seconds')!.histogram.aggregationTemporality, 1, 'a histogram, delta');
});

t.test('another value is named at start and ignored: cumulative', async (t) => {
  const from = exports.length;
  await getSettings(unknown, 2);
  const pushes = await pushesUntil('unknown', from, (p) => p.some((e) => settingsCounted(e) >= 2));
  const counted = pushes.find((e) => settingsCounted(e) >= 2)!;
  t.equal(metric(counted, 'http_status_codes')!.sum.aggregationTemporality, 2, 'a counter, cumulative');
  const later = await pushesUntil('unknown', exports.indexOf(counted) + 1, (p) => p.length >= 1);
  t.equal(settingsCounted(later[0]), 2, 'the next push counts them again');
  t.ok(
    unknown.logs().some((l) => l.level === 'warning' && /TEMPORALITY_PREFERENCE/.test(l.msg) && l.value === 'bogus'),
    'the value is named in a warning',
  );
});
