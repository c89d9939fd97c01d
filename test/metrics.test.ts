// Prometheus metrics: one scrape aggregates every HTTP thread's counters (METRICS_EXPORTER=prometheus),
// served on / and /metrics, named as Prometheus' rules want, and each outcome counter moves with its event.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { refresh, signIn, signUp } from './helpers/accounts.js';
import { namingProblems, total } from './helpers/exposition.js';

const api = await startTestService({
  AUTH_HTTP_WORKERS: '2',
  AUTH_METRICS_ENABLED: 'true',
  AUTH_METRICS_EXPORTER: 'prometheus',
  OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
  OTEL_EXPORTER_PROMETHEUS_PORT: '0',
  AUTH_MAILER_AUTOCONFIRM: 'true',
  // A client that sends X-Real-IP gets no /token request at all; the others are not limited.
  AUTH_RATE_LIMIT_HEADER: 'X-Real-IP',
  AUTH_RATE_LIMIT_TOKEN_REFRESH: '0',
});
t.teardown(() => api.stop());

const scrape = async (path = '/') => {
  const res = await fetch(`http://127.0.0.1:${api.service.metricsPort}${path}`);
  if (res.status !== 200) throw new Error(`scrape ${path}: ${res.status}`);
  return res.text();
};

t.test('request counts from both threads in one scrape', async (t) => {
  await Promise.all(Array.from({ length: 40 }, () => api.request('GET', '/settings')));
  await api.request('GET', '/missing');
  t.type(api.service.metricsPort, 'number');
  const res = await fetch(`http://127.0.0.1:${api.service.metricsPort}/`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain/);
  const text = await res.text();
  t.match(text, /^http_status_codes_total\{code="200",http_route="\/settings",method="GET"\} 40$/m, 'counted across threads');
  t.match(text, /^http_status_codes_total\{code="404",http_route="unmatched",method="GET"\} 1$/m);
  t.match(text, /^http_server_duration_seconds_count\{http_route="\/settings",method="GET"\} 40$/m);
  // The original's histogram, named and labelled as its HTTP instrumentation and Prometheus exporter give it.
  const original =
    'http_request_method="GET",http_response_status_code="200",http_route="\\/settings",url_scheme="http",network_protocol_name="http",network_protocol_version="1\\.1"';
  t.match(text, new RegExp(`^http_server_request_duration_seconds_count\\{${original}\\} 40$`, 'm'), "the original's request histogram");
  t.match(text, new RegExp(`^http_server_request_duration_seconds_bucket\\{le="10",${original}\\} 40$`, 'm'), 'its buckets end at 10 s');
  t.match(
    text,
    /^http_server_request_duration_seconds_count\{http_request_method="GET",http_response_status_code="404",http_route="unmatched",/m,
  );
  t.match(text, /^gotrue_running 1$/m);
  t.match(text, /^auth_version_info\{auth_version="0\.1\.0"\} 1$/m);
  t.equal((await fetch(`http://127.0.0.1:${api.service.metricsPort}/other`)).status, 404);
});

t.test('both paths serve an exposition that follows the naming rules', async (t) => {
  await signIn(api, (await signUp(api)).user.email);
  for (const path of ['/', '/metrics']) {
    const text = await scrape(path);
    t.strictSame(namingProblems(text), [], `${path}: counters end in _total, nothing else does, every family declared once`);
    t.match(text, /^# TYPE http_status_codes_total counter$/m, path);
    t.match(text, /^# TYPE nodejs_active_handles gauge$/m, `${path}: prom-client's gauge served without _total`);
    t.match(text, /^# TYPE auth_sign_ins_total counter$/m, path);
  }
});

t.test('the pools are read at scrape time', async (t) => {
  await api.request('GET', '/settings');
  const text = await scrape('/metrics');
  for (const thread of ['0', '1']) {
    t.match(text, new RegExp(`^auth_db_pool_connections\\{thread="${thread}"\\} \\d+$`, 'm'), `thread ${thread} total`);
    t.match(text, new RegExp(`^auth_db_pool_idle_connections\\{thread="${thread}"\\} \\d+$`, 'm'), `thread ${thread} idle`);
    t.match(text, new RegExp(`^auth_db_pool_waiting_requests\\{thread="${thread}"\\} 0$`, 'm'), `thread ${thread} waiting`);
  }
  t.ok(total(text, 'auth_db_pool_connections') >= 1, 'a thread that answered holds a connection');
  t.match(text, /^auth_crypto_pool_running_tasks 0$/m);
  t.match(text, /^auth_crypto_pool_queued_tasks 0$/m);
  t.match(text, /^auth_crypto_pool_refused_tasks_total 0$/m);

  const before = await scrape();
  const session = await signUp(api); // one hash
  await signIn(api, session.user.email); // one verification
  const after = await scrape();
  t.equal(total(after, 'auth_crypto_pool_completed_tasks_total') - total(before, 'auth_crypto_pool_completed_tasks_total'), 2);
  t.ok(total(after, 'auth_crypto_pool_run_seconds_total') > total(before, 'auth_crypto_pool_run_seconds_total'), 'run time adds up');
  t.match(after, /^auth_crypto_pool_wait_seconds_total \S+$/m);
});

t.test('sign-in, refresh and rate-limit outcomes move as they happen', async (t) => {
  const session = await signUp(api);
  const email = session.user.email;
  const before = await scrape();
  const moved = (text: string, name: string, labels: Record<string, string>) => total(text, name, labels) - total(before, name, labels);

  await signIn(api, email);
  const wrong = await api.request('POST', '/token?grant_type=password', { body: { email, password: 'not-the-password' } });
  t.equal(wrong.status, 400);
  const limited = await api.request('POST', '/token?grant_type=password', {
    headers: { 'X-Real-IP': '203.0.113.9' },
    body: { email, password: 'Secret-password-1' },
  });
  t.equal(limited.status, 429);
  const first = await refresh(api, session.refresh_token);
  t.equal(first.status, 200);
  const again = await refresh(api, session.refresh_token); // the previous token: its existing child
  t.equal(again.status, 200);
  t.equal(again.body.refresh_token, first.body.refresh_token);
  const second = await refresh(api, first.body.refresh_token);
  t.equal(second.status, 200);
  const reuse = await refresh(api, session.refresh_token); // two generations back: a reuse
  t.equal(reuse.status, 400);
  t.equal(reuse.body.error_code, 'refresh_token_already_used');
  await api.db.query(`update users set banned_until = now() + interval '1 hour' where id = $1`, [session.user.id]);
  const banned = await api.request('POST', '/token?grant_type=password', { body: { email, password: 'Secret-password-1' } });
  t.equal(banned.status, 400);

  const after = await scrape();
  t.equal(moved(after, 'auth_sign_ins_total', { method: 'password', outcome: 'success' }), 1);
  t.equal(moved(after, 'auth_sign_ins_total', { method: 'password', outcome: 'invalid_credentials' }), 1);
  t.equal(moved(after, 'auth_sign_ins_total', { method: 'password', outcome: banned.body.error_code }), 1, banned.body.error_code);
  t.equal(moved(after, 'auth_rate_limit_refusals_total', { bucket: 'token' }), 1);
  t.equal(moved(after, 'auth_sign_ins_total', { method: 'password', outcome: 'over_request_rate_limit' }), 1, 'a sign-in outcome too');
  t.equal(moved(after, 'auth_token_refreshes_total', { outcome: 'rotated' }), 2);
  t.equal(moved(after, 'auth_token_refreshes_total', { outcome: 'reused_parent' }), 1);
  t.equal(moved(after, 'auth_token_refreshes_total', { outcome: 'reuse_detected' }), 1);
  t.strictSame(namingProblems(after), []);
});

t.test('requests are counted only when an exporter will collect them', async (t) => {
  const { requestMetricsFor } = await import('../dist/server/observability/metrics.js');
  const counted = async (config: { enabled: boolean; exporter: string }) => {
    const metrics = requestMetricsFor(config, { totalCount: 1, idleCount: 1, waitingCount: 0 });
    metrics.observe('GET', '/settings', 200, 0.001);
    metrics.signIn('password', 'success');
    metrics.refresh('rotated');
    metrics.rateLimited('token');
    const snapshot = await metrics.snapshot();
    return snapshot.flatMap((m) => m.values).length;
  };
  t.ok((await counted({ enabled: true, exporter: 'prometheus' })) >= 5);
  t.equal(await counted({ enabled: false, exporter: 'prometheus' }), 0, 'metrics off: nothing kept per request');
  t.ok((await counted({ enabled: true, exporter: 'opentelemetry' })) >= 5, 'the OTLP exporter pushes the same registry');
});
