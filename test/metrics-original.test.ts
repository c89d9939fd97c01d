// The original's own Prometheus metrics beyond the request counters, kept under its names and labels for
// the dashboards built on it: the version gauges, the email send limit's refusals by path, and the four
// password-hashing counters with each algorithm's parameters and a comparison's answer.
import t from 'tap';
import bcrypt from 'bcryptjs';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { scrapeMetrics, total, namingProblems } from './helpers/exposition.js';
import { versionParts } from '../dist/server/observability/metrics-exporter.js';
import { VERSION } from '../dist/server/version.js';

const api = await startTestService({
  AUTH_HTTP_WORKERS: '2',
  AUTH_METRICS_ENABLED: 'true',
  AUTH_METRICS_EXPORTER: 'prometheus',
  OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
  OTEL_EXPORTER_PROMETHEUS_PORT: '0',
  // No mail may leave: every sign-up's confirmation is refused by the send limit before any SMTP work.
  AUTH_MAILER_AUTOCONFIRM: 'false',
  AUTH_RATE_LIMIT_EMAIL_SENT: '0',
  AUTH_PASSWORD_HASH_MEMORY_KIB: '1024',
  AUTH_PASSWORD_HASH_TIME_COST: '1',
  AUTH_PASSWORD_HASH_PARALLELISM: '1',
});
t.teardown(() => api.stop());
const scrape = () => scrapeMetrics(api.service.metricsPort);
const admin = await adminToken();
const createUser = (body: Record<string, unknown>) =>
  api.request('POST', '/admin/users', { token: admin, body: { email_confirm: true, ...body } });
const signIn = (email: string, password: string) => api.request('POST', '/token?grant_type=password', { body: { email, password } });

const OURS = { alg: 'argon2id', v: '19', m: '1024', t: '1', p: '1', len: '32' };
const GENERATED = 'gotrue_generate_from_password';
const COMPARED = 'gotrue_compare_hash_and_password';

t.test('the version gauges: each part of the build version', async (t) => {
  const text = await scrape();
  const expected = versionParts(VERSION);
  for (const part of ['major', 'minor', 'patch', 'rc'] as const) {
    t.match(text, new RegExp(`^global_auth_version_${part} ${expected[part]}$`, 'm'), part);
  }
  t.strictSame(versionParts('2.170.3-rc.4'), { major: 2, minor: 170, patch: 3, rc: 4 });
  t.strictSame(versionParts('1.2.3'), { major: 1, minor: 2, patch: 3, rc: 0 });
  t.strictSame(versionParts('1.2.3-beta.1'), { major: 1, minor: 2, patch: 3, rc: 0 }, 'only an rc pre-release counts');
  t.strictSame(versionParts('not a version'), { major: 0, minor: 0, patch: 0, rc: 0 });
});

t.test("a request refused by the email send limit is counted by its path, under the original's name", async (t) => {
  const before = total(await scrape(), 'gotrue_email_rate_limit_counter_total', { path: '/signup' });
  const res = await api.request('POST', '/signup', { body: { email: uniqueEmail('limited'), password: 'Secret-password-1' } });
  t.equal(res.status, 429);
  t.equal(res.body.error_code, 'over_email_send_rate_limit');
  const after = total(await scrape(), 'gotrue_email_rate_limit_counter_total', { path: '/signup' });
  t.equal(after - before, 1);
});

t.test('hashing a new password: submitted and completed, with our algorithm and its parameters', async (t) => {
  const before = await scrape();
  const email = uniqueEmail('hashed');
  t.equal((await createUser({ email, password: 'Secret-password-1' })).status, 200);
  const after = await scrape();
  for (const stage of ['submitted', 'completed']) {
    const name = `${GENERATED}_${stage}_total`;
    t.equal(total(after, name, OURS) - total(before, name, OURS), 1, stage);
  }
});

t.test('comparing with a stored hash: counted with its parameters and the answer; an unknown user is not', async (t) => {
  const email = uniqueEmail('compared');
  t.equal((await createUser({ email, password: 'Secret-password-1' })).status, 200);
  const imported = uniqueEmail('bcrypt');
  t.equal((await createUser({ email: imported, password_hash: bcrypt.hashSync('imported-password', 4) })).status, 200);

  const before = await scrape();
  t.equal((await signIn(email, 'Secret-password-1')).status, 200);
  t.equal((await signIn(email, 'wrong-password')).status, 400);
  t.equal((await signIn(uniqueEmail('nobody'), 'Secret-password-1')).status, 400);
  t.equal((await signIn(imported, 'imported-password')).status, 200);
  const after = await scrape();
  const moved = (name: string, labels: Record<string, string>) =>
    total(after, `${COMPARED}_${name}_total`, labels) - total(before, `${COMPARED}_${name}_total`, labels);

  t.equal(moved('submitted', OURS), 2, 'two comparisons with the argon2id hash; none for the unknown user');
  t.equal(moved('completed', { ...OURS, match: 'true' }), 1, 'the right password');
  t.equal(moved('completed', { ...OURS, match: 'false' }), 1, 'the wrong one');
  t.equal(moved('submitted', { alg: 'bcrypt', bcrypt_cost: '4' }), 1, 'an imported bcrypt hash, with its cost');
  t.equal(moved('completed', { alg: 'bcrypt', bcrypt_cost: '4', match: 'true' }), 1);
  t.equal(moved('submitted', {}), 3, 'nothing else was compared');
  t.strictSame(namingProblems(after), [], 'the exposition still follows the naming rules');
});
