// Prometheus metrics: one scrape aggregates every HTTP thread's counters (METRICS_EXPORTER=prometheus).
import t from 'tap';
import { startTestService } from './helpers/server.js';

const api = await startTestService({ AUTH_HTTP_WORKERS: '2', AUTH_METRICS_ENABLED: 'true', AUTH_METRICS_EXPORTER: 'prometheus',
  OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1', OTEL_EXPORTER_PROMETHEUS_PORT: '0' });
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
