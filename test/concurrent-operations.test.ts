// Many clients at once on the same three addresses: sign-ups, sign-ins, anonymous users, refreshes (of the
// newest token, of an older one, and of one token twice at once), sign-outs, profile changes, TOTP
// enrolment and verification, and the admin API banning, renaming, deleting and re-creating the same
// users meanwhile. Which of them succeed depends on the interleaving; what must hold in every
// interleaving is checked: no 5xx and no error logged, concurrent refreshes of one token get the same
// child, and afterwards no address belongs to two users, no session outlives its user, and no session
// holds two active refresh tokens. The operations are drawn from a seed (CONCURRENT_SEED to try another).
import t from 'tap';
import { startTestService, type Reply } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { totpCode } from './helpers/mfa.js';
import { seeded } from './helpers/seeded.js';
import { inFlight } from './helpers/in-flight.js';
import { errorMessages } from './helpers/log.js';

const OPERATIONS = 2000;
const IN_FLIGHT = 16;

const { random, pick, one } = seeded(Number(process.env.CONCURRENT_SEED ?? 1));

const api = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  AUTH_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'false',
  ...Object.fromEntries(
    ['EMAIL_SENT', 'VERIFY', 'TOKEN_REFRESH', 'OTP', 'ANONYMOUS_USERS'].map((limit) => [`AUTH_RATE_LIMIT_${limit}`, '1000000']),
  ),
});
t.teardown(() => api.stop());
const admin = await adminToken();

const EMAILS = ['a@example.com', 'b@example.com', 'c@example.com'] as const;
const PASSWORDS = ['secret99', 'secret98'] as const;
interface Session {
  access: string;
  refresh: string;
  /** refresh tokens this session has rotated away from */
  older: string[];
}
const sessions: Session[] = [];
const factors: Array<{ id: string; secret: string; access: string }> = [];
const failures: string[] = [];

const keep = (r: Reply) => {
  if (r.status === 200) sessions.push({ access: r.body.access_token, refresh: r.body.refresh_token, older: [] });
  return r;
};
const rotated = (s: Session, r: Reply) => {
  if (r.status !== 200) return;
  s.older.push(s.refresh);
  s.refresh = r.body.refresh_token;
  s.access = r.body.access_token;
};
const refresh = (token: string) => api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: token } });
const anyUser = async () =>
  pick<{ id: string }>((await api.request('GET', '/admin/users?per_page=50', { token: admin })).body?.users ?? []);

/** Each draws what it acts on when it runs, so it meets whatever the others left. Undefined: nothing to act on yet. */
const OPERATIONS_BY_NAME: Record<string, () => Promise<Reply | undefined>> = {
  signUp: () => api.request('POST', '/signup', { body: { email: one(EMAILS), password: one(PASSWORDS) } }),
  signIn: async () =>
    keep(await api.request('POST', '/token?grant_type=password', { body: { email: one(EMAILS), password: one(PASSWORDS) } })),
  anonymous: async () => keep(await api.request('POST', '/signup', { body: {} })),
  refresh: async () => {
    const s = pick(sessions);
    if (!s) return;
    const older = random() < 0.3 ? pick(s.older) : undefined;
    const r = await refresh(older ?? s.refresh);
    if (!older) rotated(s, r);
    return r;
  },
  refreshTwiceAtOnce: async () => {
    const s = pick(sessions);
    if (!s) return;
    const [a, b] = await Promise.all([refresh(s.refresh), refresh(s.refresh)]);
    if (a.status === 200 && b.status === 200 && a.body.refresh_token !== b.body.refresh_token) {
      failures.push(`one token refreshed twice at once gave two children: ${a.body.refresh_token}, ${b.body.refresh_token}`);
    }
    rotated(s, a);
    return a.status >= 500 ? a : b;
  },
  signOut: async () => {
    const s = pick(sessions);
    return s && api.request('POST', `/logout?scope=${one(['local', 'others', 'global'])}`, { token: s.access });
  },
  getUser: async () => {
    const s = pick(sessions);
    return s && api.request('GET', '/user', { token: s.access });
  },
  updateUser: async () => {
    const s = pick(sessions);
    const body = one([
      { email: one(EMAILS) },
      { password: one(PASSWORDS) },
      { data: { n: random() } },
      { email: `x${Math.floor(random() * 5)}@example.com` },
    ]);
    return s && api.request('PUT', '/user', { token: s.access, body });
  },
  adminUpdate: async () => {
    const user = await anyUser();
    const body = one([
      { ban_duration: '1h' },
      { ban_duration: 'none' },
      { email: one(EMAILS) },
      { app_metadata: { n: random() } },
      { password: one(PASSWORDS) },
    ]);
    return user && api.request('PUT', `/admin/users/${user.id}`, { token: admin, body });
  },
  adminDelete: async () => {
    const user = await anyUser();
    return user && api.request('DELETE', `/admin/users/${user.id}`, { token: admin, body: { should_soft_delete: random() < 0.5 } });
  },
  adminCreate: () =>
    api.request('POST', '/admin/users', { token: admin, body: { email: one(EMAILS), password: one(PASSWORDS), email_confirm: true } }),
  enrollTotp: async () => {
    const s = pick(sessions);
    if (!s) return;
    const r = await api.request('POST', '/factors', { token: s.access, body: { factor_type: 'totp', friendly_name: one(['a', 'b']) } });
    if (r.status === 200) factors.push({ id: r.body.id, secret: r.body.totp.secret, access: s.access });
    return r;
  },
  verifyTotp: async () => {
    const f = pick(factors);
    if (!f) return;
    const c = await api.request('POST', `/factors/${f.id}/challenge`, { token: f.access, body: {} });
    if (c.status !== 200) return c;
    return keep(
      await api.request('POST', `/factors/${f.id}/verify`, {
        token: f.access,
        body: { challenge_id: c.body.id, code: totpCode(f.secret) },
      }),
    );
  },
  unenroll: async () => {
    const f = pick(factors);
    return f && api.request('DELETE', `/factors/${f.id}`, { token: f.access });
  },
  generateLink: () =>
    api.request('POST', '/admin/generate_link', {
      token: admin,
      body: one([
        { type: 'magiclink', email: one(EMAILS) },
        { type: 'signup', email: one(EMAILS), password: one(PASSWORDS) },
        { type: 'recovery', email: one(EMAILS) },
        { type: 'invite', email: one(EMAILS) },
      ]),
    }),
  otp: () => api.request('POST', '/otp', { body: { email: one(EMAILS), create_user: random() < 0.5 } }),
  recover: () => api.request('POST', '/recover', { body: { email: one(EMAILS) } }),
};
const NAMES = Object.keys(OPERATIONS_BY_NAME);

t.test('whatever the interleaving: no 5xx, one child per refreshed token, no error logged', async (t) => {
  // Each operation is drawn when it starts, so the seed fixes the sequence the runs interleave.
  await inFlight(IN_FLIGHT, Array.from({ length: OPERATIONS }), async () => {
    const name = one(NAMES);
    const r = await OPERATIONS_BY_NAME[name]();
    if (r && r.status >= 500) failures.push(`${name} → ${r.status} ${r.text.slice(0, 300)}`);
  });
  t.same(failures, []);
  // How many factors survive to be verified depends on the interleaving (their users are banned and
  // deleted meanwhile); sessions always come, anonymous sign-ups among them.
  t.ok(sessions.length > 0, `${sessions.length} sessions and ${factors.length} TOTP factors were made on the way`);
  t.same(errorMessages(api.logs()), [], 'no error logged');
});

t.test('afterwards the rows agree with each other', async (t) => {
  const { rows: shared } = await api.db.query(
    `select email, count(*)::int as users from users where email is not null and deleted_at is null group by email having count(*) > 1`,
  );
  t.same(shared, [], 'no address belongs to two users');
  const { rows: orphaned } = await api.db.query(`select s.id from sessions s left join users u on u.id = s.user_id where u.id is null`);
  t.same(orphaned, [], 'no session outlives its user');
  const { rows: doubled } = await api.db.query(
    `select session_id, count(*)::int as active from refresh_tokens where not revoked group by session_id having count(*) > 1`,
  );
  t.same(doubled, [], 'no session holds two active refresh tokens');
});
