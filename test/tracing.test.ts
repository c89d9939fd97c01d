// OpenTelemetry tracing: spans reach an OTLP/HTTP collector with the route in parametrised form, the
// method, the status and the resource attributes (SPEC: Logging and observability).
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService } from './helpers/server.js';

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
    { 'http.method': 'GET', 'http.route.params.user_id': '4f6c1d2e-0000-4000-8000-00000000abcd' },
    'the route in parametrised form, each parameter as http.route.params.<key>',
  );
  t.equal(Number(byRoute['/token']['http.status_code']), 400);
});
