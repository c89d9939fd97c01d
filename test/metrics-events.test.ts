// The metrics of issue 17 moving as their events happen — sign-ups by method and outcome, mail and SMS
// sends by outcome (and the original's mail counters), the database pool's acquire time — and a live
// scrape after that traffic accepted by `promtool check metrics` (Debian's prometheus package, which
// .ci/run installs).
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { startSmsGatewayFake } from './helpers/sms.js';
import { namingProblems, scrapeMetrics, total } from './helpers/exposition.js';

const smtp = await startSmtpServer();
const sms = await startSmsGatewayFake();
const api = await startTestService({
  AUTH_HTTP_WORKERS: '2',
  AUTH_METRICS_ENABLED: 'true',
  AUTH_METRICS_EXPORTER: 'prometheus',
  OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
  OTEL_EXPORTER_PROMETHEUS_PORT: '0',
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  AUTH_SMS_PROVIDER: 'twilio',
  AUTH_SMS_TWILIO_API_BASE_URL: sms.baseUrl,
  AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC123',
  AUTH_SMS_TWILIO_AUTH_TOKEN: 'tok',
  AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
  AUTH_RATE_LIMIT_EMAIL_SENT: '1000',
  AUTH_RATE_LIMIT_SMS_SENT: '1000',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
  await sms.close();
});

const scrape = () => scrapeMetrics(api.service.metricsPort);
const signup = (body: unknown) => api.request('POST', '/signup', { body });

t.test('sign-ups by method and outcome, sends by channel and outcome', async (t) => {
  const before = await scrape();
  const moved = (text: string, name: string, labels: Record<string, string>) => total(text, name, labels) - total(before, name, labels);

  t.equal((await signup({ email: 'first@example.com', password: 'secret99' })).status, 200);
  await smtp.waitForMail('first@example.com');
  t.equal((await signup({ email: 'weak@example.com', password: '1' })).status, 422);
  smtp.failNext(554, 'mailbox unavailable');
  t.equal((await signup({ email: 'bounce@example.com', password: 'secret99' })).status, 500);
  t.equal((await signup({ phone: '+15551230001', password: 'secret99' })).status, 200);
  await sms.waitForMessage('+15551230001');
  sms.failNext('twilio');
  t.equal((await signup({ phone: '+15551230002', password: 'secret99' })).status, 422);
  t.equal((await signup({})).status, 200, 'an anonymous sign-up');

  const after = await scrape();
  t.equal(moved(after, 'auth_sign_ups_total', { method: 'email', outcome: 'success' }), 1);
  t.equal(moved(after, 'auth_sign_ups_total', { method: 'email', outcome: 'weak_password' }), 1);
  t.equal(moved(after, 'auth_sign_ups_total', { method: 'email', outcome: 'unexpected_failure' }), 1, 'the mail that bounced');
  t.equal(moved(after, 'auth_sign_ups_total', { method: 'phone', outcome: 'success' }), 1);
  t.equal(moved(after, 'auth_sign_ups_total', { method: 'phone', outcome: 'sms_send_failed' }), 1);
  t.equal(moved(after, 'auth_sign_ups_total', { method: 'anonymous', outcome: 'success' }), 1);
  t.equal(moved(after, 'auth_deliveries_total', { channel: 'email', outcome: 'sent' }), 1);
  t.equal(moved(after, 'auth_deliveries_total', { channel: 'email', outcome: 'failed' }), 1);
  t.equal(moved(after, 'auth_deliveries_total', { channel: 'sms', outcome: 'sent' }), 1);
  t.equal(moved(after, 'auth_deliveries_total', { channel: 'sms', outcome: 'failed' }), 1);
  t.equal(moved(after, 'global_auth_email_send_operations_total', { type: 'signup' }), 2, "the original's counter: every attempt");
  t.equal(moved(after, 'global_auth_email_send_errors_total', { type: 'signup' }), 1, "the original's counter: the failure");
});

t.test("each checkout's wait for a database connection is observed", async (t) => {
  const before = total(await scrape(), 'auth_db_pool_acquire_seconds_count');
  await Promise.all(Array.from({ length: 10 }, () => api.request('GET', '/user', { token: 'not-a-jwt' })));
  await signup({ email: 'acquire@example.com', password: 'secret99' });
  const text = await scrape();
  t.ok(total(text, 'auth_db_pool_acquire_seconds_count') > before, 'checkouts were counted');
  t.match(text, /^# TYPE auth_db_pool_acquire_seconds histogram$/m);
  t.match(text, /^auth_db_pool_acquire_seconds_bucket\{le="\+Inf"\} \d+$/m, 'one histogram summed over the threads');
  t.equal(
    total(text, 'auth_db_pool_acquire_seconds_bucket', { le: '+Inf' }),
    total(text, 'auth_db_pool_acquire_seconds_count'),
    'the +Inf bucket holds every observation',
  );
});

const PROMTOOL = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((p) => existsSync(p));

t.test(
  'promtool check metrics accepts a live scrape after traffic',
  { skip: PROMTOOL ? false : "promtool is not installed (.ci/run installs Debian's prometheus package)" },
  async (t) => {
    const text = await scrape();
    t.strictSame(namingProblems(text), []);
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      const child = execFile(PROMTOOL!, ['check', 'metrics'], (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
      );
      child.stdin!.end(text);
    });
    t.equal(output.trim(), '', 'no warning');
    t.equal(code, 0, 'promtool exits 0');
  },
);
