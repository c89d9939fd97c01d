// Prometheus metrics: one scrape aggregates every HTTP thread's counters (METRICS_EXPORTER=prometheus).
import t from 'tap';
import { startTestService } from './helpers/server.js';

const api = await startTestService({
  AUTH_HTTP_WORKERS: '2',
  AUTH_METRICS_ENABLED: 'true',
  AUTH_METRICS_EXPORTER: 'prometheus',
  OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
  OTEL_EXPORTER_PROMETHEUS_PORT: '0',
});
t.teardown(() => api.stop());

t.test('request counts from both threads in one scrape', async (t) => {
  await Promise.all(Array.from({ length: 40 }, () => api.request('GET', '/settings')));
  await api.request('GET', '/missing');
  t.type(api.service.metricsPort, 'number');
  const scrape = await fetch(`http://127.0.0.1:${api.service.metricsPort}/`);
  t.equal(scrape.status, 200);
  t.match(scrape.headers.get('content-type'), /^text\/plain/);
  const text = await scrape.text();
  t.match(text, /^http_status_codes\{code="200",http_route="\/settings",method="GET"\} 40$/m, 'counted across threads');
  t.match(text, /^http_status_codes\{code="404",http_route="unmatched",method="GET"\} 1$/m);
  t.match(text, /^http_server_duration_seconds_count\{http_route="\/settings",method="GET"\} 40$/m);
  t.match(text, /^gotrue_running 1$/m);
  t.match(text, /^auth_version_info\{auth_version="0\.1\.0"\} 1$/m);
  t.equal((await fetch(`http://127.0.0.1:${api.service.metricsPort}/other`)).status, 404);
});

t.test('requests are counted only when the Prometheus exporter will collect them', async (t) => {
  const { requestMetricsFor } = await import('../dist/server/observability/metrics.js');
  const counted = async (config: { enabled: boolean; exporter: string }) => {
    const metrics = requestMetricsFor(config);
    metrics.observe('GET', '/settings', 200, 0.001);
    const found = (await metrics.snapshot()).find((m) => m.name === 'http_status_codes');
    return found?.values.reduce((sum, v) => sum + v.value, 0) ?? 0;
  };
  t.equal(await counted({ enabled: true, exporter: 'prometheus' }), 1);
  t.equal(await counted({ enabled: false, exporter: 'prometheus' }), 0, 'metrics off: nothing kept per request');
  t.equal(await counted({ enabled: true, exporter: 'opentelemetry' }), 0, 'no exporter in this build reads them');
});
