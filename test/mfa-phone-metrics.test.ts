// The SMS of MFA phone challenges count in auth_deliveries_total as sign-in codes' SMS do: channel sms,
// outcome sent, failed or timeout (docs/observability.md#metrics).
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { startSmsGatewayFake, twilioEnv } from './helpers/sms.js';
import { scrapeMetrics, total } from './helpers/exposition.js';

const sms = await startSmsGatewayFake();
const api = await startTestService({
  ...twilioEnv(sms.baseUrl),
  AUTH_METRICS_ENABLED: 'true',
  AUTH_METRICS_EXPORTER: 'prometheus',
  OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
  OTEL_EXPORTER_PROMETHEUS_PORT: '0',
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_MFA_PHONE_ENROLL_ENABLED: 'true',
  AUTH_MFA_PHONE_VERIFY_ENABLED: 'true',
  AUTH_RATE_LIMIT_SMS_SENT: '1000',
});
t.teardown(async () => {
  await api.stop();
  await sms.close();
});

t.test('MFA phone challenges: each SMS counted by outcome', async (t) => {
  // Two users' factors, as MFA_PHONE_MAX_FREQUENCY spaces one factor's challenges.
  const enrolled = async (phone: string) => {
    const { access_token: token } = await signUp(api);
    const factor = await api.request('POST', '/factors', { token, body: { factor_type: 'phone', phone } });
    t.equal(factor.status, 200);
    return () => api.request('POST', `/factors/${factor.body.id}/challenge`, { token, body: {} });
  };
  const [first, second] = [await enrolled('+14155558100'), await enrolled('+14155558101')];

  const before = await scrapeMetrics(api.service.metricsPort);
  t.equal((await first()).status, 200);
  await sms.waitForMessage('+14155558100');
  sms.failNext('twilio');
  t.equal((await second()).status, 422);
  const after = await scrapeMetrics(api.service.metricsPort);

  const moved = (labels: Record<string, string>) =>
    total(after, 'auth_deliveries_total', labels) - total(before, 'auth_deliveries_total', labels);
  t.equal(moved({ channel: 'sms', outcome: 'sent' }), 1);
  t.equal(moved({ channel: 'sms', outcome: 'failed' }), 1);
});
