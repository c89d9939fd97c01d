// OpenTelemetry tracing: spans reach an OTLP/HTTP collector with the route in parametrised form, the
// method, the status and the resource attributes (SPEC: Logging and observability). Read here as JSON
// (OTEL_EXPORTER_OTLP_PROTOCOL=http/json); the default protobuf and gRPC are in otlp-protocols.test.ts.
import t from 'tap';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { startTestService } from './helpers/server.js';
import { reportingFailures } from '../dist/server/observability/tracing.js';
import { requestSpanAttributes } from '../dist/server/observability/http-semconv.js';

const received: any[] = [];
const collector = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    received.push({ path: req.url, type: req.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString()) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => collector.close(() => resolve())));

t.test('one span per request, exported on shutdown at the latest', async (t) => {
  const api = await startTestService({
    AUTH_TRACING_ENABLED: 'true',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,team=auth',
  });
  await api.request('GET', '/settings');
  await api.request('GET', '/admin/users/4f6c1d2e-0000-4000-8000-00000000abcd');
  await api.request('POST', '/token?grant_type=password', { body: { email: 'x@example.com', password: 'nope' } });
  await api.stop();

  t.ok(received.length >= 1, 'the collector was called');
  t.equal(received[0].path, '/v1/traces');
  const resourceSpans = received.flatMap((r) => r.body.resourceSpans);
  const attrs = (list: any[]) => Object.fromEntries(list.map((a: any) => [a.key, Object.values(a.value)[0]]));
  const resource = attrs(resourceSpans[0].resource.attributes);
  t.match(resource, { 'service.name': 'gotrue', 'auth.version': '0.1.0', 'deployment.environment': 'test', team: 'auth' });
  const spans = resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans));
  const byRoute = Object.fromEntries(spans.map((s: any) => [attrs(s.attributes)['http.route'], { name: s.name, ...attrs(s.attributes) }]));
  t.match(byRoute['/settings'], { name: 'api', 'http.method': 'GET', 'http.route': '/settings' });
  t.equal(Number(byRoute['/settings']['http.status_code']), 200);
  t.match(byRoute['/token'], { 'http.method': 'POST' });
  t.match(
    byRoute['/admin/users/{user_id}'],
    { 'http.method': 'GET', 'http.route.param.user_id': '4f6c1d2e-0000-4000-8000-00000000abcd' },
    "the route in parametrised form, each parameter as http.route.param.<key> (the original's name)",
  );
  t.notOk('http.route.params.user_id' in byRoute['/admin/users/{user_id}'], 'never under the plural name');
  t.equal(Number(byRoute['/token']['http.status_code']), 400);
  // The conventions' attributes the original's HTTP instrumentation (otelhttp) adds.
  t.match(byRoute['/token'], {
    'http.request.method': 'POST',
    'url.scheme': 'http',
    'url.path': '/token',
    'network.protocol.version': '1.1',
    'server.address': '127.0.0.1',
    'client.address': '127.0.0.1',
  });
  t.equal(Number(byRoute['/token']['http.response.status_code']), 400);
  t.equal(Number(byRoute['/token']['server.port']), api.service.port, "the Host header's port");
  const token = spans.find((s: any) => attrs(s.attributes)['http.route'] === '/token');
  t.notOk(token.status?.code, 'a refusal of the client is not an error of the span');
});

t.test("the conventions' attributes of odd requests: another method, the Host header's forms", async (t) => {
  const facts = { method: 'GET', route: '/settings', params: {}, status: 503, path: '/settings' };
  t.match(requestSpanAttributes({ ...facts, method: 'PROPFIND' }), {
    'http.method': 'PROPFIND',
    'http.request.method': '_OTHER',
    'http.request.method_original': 'PROPFIND',
  });
  t.notOk('http.request.method_original' in requestSpanAttributes(facts), 'only for a method outside the standard ones');
  const server = (host: string | undefined) => {
    const a = requestSpanAttributes({ ...facts, host });
    return [a['server.address'], a['server.port']];
  };
  t.strictSame(server('auth.example.com'), ['auth.example.com', undefined]);
  t.strictSame(server('auth.example.com:80'), ['auth.example.com', undefined], "HTTP's own port is not named");
  t.strictSame(server('Auth.Example.com:8443'), ['auth.example.com', 8443]);
  t.strictSame(server('[::1]:9999'), ['::1', 9999]);
  t.strictSame(server('a b'), [undefined, undefined], 'not a host: left out');
  t.strictSame(server('evil.example/path'), [undefined, undefined]);
  t.strictSame(server('user@evil.example'), [undefined, undefined]);
  t.strictSame(server(undefined), [undefined, undefined]);
});

t.test('the statements and crypto-pool calls a request waited on are its child spans', async (t) => {
  received.length = 0;
  const api = await startTestService({
    AUTH_TRACING_ENABLED: 'true',
    AUTH_MAILER_AUTOCONFIRM: 'true',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
  });
  const res = await api.request('POST', '/signup', { body: { email: 'traced@example.com', password: 'secret99' } });
  t.equal(res.status, 200);
  await api.stop();

  const spans = received.flatMap((r) => r.body.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((s: any) => s.spans)));
  const attrs = (list: any[]) => Object.fromEntries(list.map((a: any) => [a.key, Object.values(a.value)[0]]));
  const signup = spans.find((s: any) => s.name === 'api' && attrs(s.attributes)['http.route'] === '/signup');
  t.ok(signup, 'the request span');
  const children = spans.filter((s: any) => s.parentSpanId === signup.spanId);
  t.equal(new Set(children.map((c: any) => c.traceId)).size, 1);
  t.equal(children[0].traceId, signup.traceId, "in the request span's trace");
  const names = children.map((c: any) => c.name);
  t.ok(names.includes('crypto hashPassword'), `the hash: ${names.join(', ')}`);
  t.ok(names.includes('db begin') && names.includes('db commit'), 'the transaction');
  t.ok(names.filter((n: string) => n.startsWith('db ')).length >= 4, 'its statements');
  const statement = children.find((c: any) => c.name.startsWith('db ') && c.name !== 'db begin');
  t.match(attrs(statement.attributes), { 'db.system': 'postgresql' });
  for (const c of children) {
    t.ok(BigInt(c.startTimeUnixNano) >= BigInt(signup.startTimeUnixNano), `${c.name} starts within the request`);
    t.ok(BigInt(c.endTimeUnixNano) <= BigInt(signup.endTimeUnixNano), `${c.name} ends within the request`);
  }
  t.notOk(JSON.stringify(children).includes('traced@example.com'), 'no statement values in the spans');
});

t.test("a caller's W3C trace context: the request's span joins the caller's trace, as in the original", async (t) => {
  received.length = 0;
  const api = await startTestService({
    AUTH_TRACING_ENABLED: 'true',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
  });
  const traceId = randomBytes(16).toString('hex');
  const callerSpan = randomBytes(8).toString('hex');
  const unsampled = randomBytes(16).toString('hex');
  const caller = (id: string, flags: string) => ({ headers: { traceparent: `00-${id}-${callerSpan}-${flags}`, tracestate: 'vendor=x' } });
  t.equal((await api.request('GET', '/settings', caller(traceId, '01'))).status, 200);
  t.equal((await api.request('GET', '/health', caller(unsampled, '00'))).status, 200);
  t.equal((await api.request('GET', '/settings', { headers: { traceparent: 'not-a-trace-context' } })).status, 200);
  t.equal((await api.request('GET', '/health', { headers: { traceparent: `00-${'0'.repeat(32)}-${callerSpan}-01` } })).status, 200);
  await api.stop();

  const spans = received.flatMap((r) => r.body.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((s: any) => s.spans)));
  const joined = spans.filter((s: any) => s.traceId === traceId);
  t.equal(joined.length, 1, "one span in the caller's trace");
  t.equal(joined[0]?.parentSpanId, callerSpan, "the caller's span is its parent");
  t.equal(joined[0]?.traceState, 'vendor=x', 'the trace state is kept');
  t.notOk(
    spans.some((s: any) => s.traceId === unsampled),
    'a caller that does not sample: no span, as the default sampler follows the parent',
  );
  const own = spans.filter((s: any) => s.traceId !== traceId);
  t.equal(own.length, 2, 'a malformed or all-zero trace context: each request starts a trace of its own');
  for (const s of own) t.notOk(s.parentSpanId, 'with no parent');
});

t.test('a collector that is down: logged once, and the stop is bounded', async (t) => {
  // A port nothing listens on: every export is refused.
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  // The SDK's own variable (read by the SDK, not by Portcullis): a batch every 50 ms, so that several
  // exports fail while the requests go on, and the log must still say it once.
  process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
  const api = await startTestService({ AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
  delete process.env.OTEL_BSP_SCHEDULE_DELAY;
  for (let i = 0; i < 8; i++) {
    await api.request('GET', '/settings');
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  const started = performance.now();
  let timer: NodeJS.Timeout;
  const stopped = await Promise.race([
    api.stop().then(() => 'stopped'),
    new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still stopping after 5 s'), 5000))),
  ]);
  clearTimeout(timer!);
  t.equal(stopped, 'stopped', "the stop does not wait out the exporter's retries");
  t.comment(`stopped in ${Math.round(performance.now() - started)} ms`);
  const failures = api.logs().filter((l) => l.msg?.startsWith('trace export failed'));
  t.equal(failures.length, 1, 'logged once');
  t.equal(failures[0].level, 'warning', 'as a warning');
});

t.test('a collector that is down is logged once per process, however many HTTP threads export', async (t) => {
  // Each HTTP thread wraps its exporter; here two wrappers stand for two threads, around an exporter whose
  // every export fails at once, so the count depends on the shared flag alone, not on when exports finish.
  const failingExporter = {
    export: (_spans: unknown[], done: (result: { code: number; error?: Error }) => void) => done({ code: 1, error: new Error('refused') }),
    shutdown: async () => {},
  };
  const failuresWith = (shared: boolean) => {
    const lines: any[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const threads = [1, 2].map(() => reportingFailures(failingExporter as any, 'http://collector', shared ? flag : new Int32Array(1), log));
    for (let batch = 0; batch < 3; batch++) for (const exporter of threads) exporter.export([], () => {});
    return lines.filter((l) => String(l.msg).startsWith('trace export failed')).length;
  };
  t.equal(failuresWith(true), 1, 'the shared flag: one line for the process');
  t.equal(failuresWith(false), 2, 'without it each thread would say it (the reason the flag exists)');
});
