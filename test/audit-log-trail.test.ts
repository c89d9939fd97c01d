// Where audit entries go (docs/users-and-audit.md#audit-log): each one is a row of audit_log_entries and a
// log line `audit_event` carrying the same entry (its id, payload and address), as the original logs them;
// with AUDIT_LOG_DISABLE_POSTGRES the rows are left out and the log lines are the whole trail. Each line
// names its request (id, User-Agent), and the request's own line carries its last entry as auth_event.
// Driven through the real auth-js client: sign-up, password sign-in, refresh, MFA verification, logout;
// an entry whose transaction rolled back is never logged.
import t from 'tap';
import { startTestService, type TestService } from './helpers/server.js';
import { AuthClient } from '@supabase/auth-js';
import { memoryStorage } from './helpers/auth-client.js';
import { totpCode } from './helpers/mfa.js';
import { adminToken } from './helpers/admin.js';
import { startSmtpServer } from './helpers/smtp.js';

type Entry = {
  audit_log_id: string;
  action: string;
  actor_id: string;
  ip_address: string;
  log_type: string;
  traits?: unknown;
  request_id?: string;
  user_agent?: string;
};

const USER_AGENT = 'audit-trail-test/1.0';

/** A user's life through auth-js; the actions it must leave, in order. */
async function exercise(api: TestService, email: string): Promise<string> {
  const auth = new AuthClient({
    url: api.url,
    storage: memoryStorage(),
    autoRefreshToken: false,
    detectSessionInUrl: false,
    headers: { 'User-Agent': USER_AGENT },
  });
  const signUp = await auth.signUp({ email, password: 'Secret-password-1' });
  if (signUp.error) throw signUp.error;
  const signIn = await auth.signInWithPassword({ email, password: 'Secret-password-1' });
  if (signIn.error) throw signIn.error;
  const refreshed = await auth.refreshSession();
  if (refreshed.error) throw refreshed.error;
  const enrolled = await auth.mfa.enroll({ factorType: 'totp' });
  if (enrolled.error) throw enrolled.error;
  const verified = await auth.mfa.challengeAndVerify({ factorId: enrolled.data.id, code: totpCode(enrolled.data.totp.secret) });
  if (verified.error) throw verified.error;
  const out = await auth.signOut();
  if (out.error) throw out.error;
  return signUp.data.user!.id;
}
const ACTIONS = [
  'user_signedup', // the autoconfirmed sign-up: signed up, then signed in, as the original writes it
  'login',
  'login', // signInWithPassword
  'token_revoked',
  'token_refreshed',
  'factor_in_progress',
  'challenge_created',
  'verification_attempted',
  'token_revoked', // the verification swaps the session's 12-character refresh token, as the original audits it
  'logout',
];

/** The audit_event lines of a stopped service (its log is complete then) for one actor, in order. */
function announced(api: TestService, actorId: string): Entry[] {
  return api
    .logs()
    .filter((l) => l.msg === 'audit_event' && l.auth_audit_event?.actor_id === actorId)
    .map((l) => l.auth_audit_event as Entry);
}

t.test('by default: a row and a log line for every entry, the same entry in both', async (t) => {
  const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  const userId = await exercise(api, 'trail-rows@example.com');
  const rows = (
    await api.db.query(
      `select id, payload, ip_address from audit_log_entries where payload->>'actor_id' = $1 order by created_at, payload->>'action'`,
      [userId],
    )
  ).rows;
  await api.stop();
  const lines = announced(api, userId);
  t.same(
    lines.map((l) => l.action),
    ACTIONS,
    'every action of the flow is logged, in order',
  );
  t.equal(rows.length, lines.length, 'as many rows as lines');
  for (const line of lines) {
    const row = rows.find((r) => r.id === line.audit_log_id);
    t.ok(row, `the ${line.action} line names its row`);
    if (!row) continue;
    const {
      audit_log_id: _,
      ip_address: ip,
      created_at: __,
      request_id: ___,
      user_agent: ____,
      ...payload
    } = line as Entry & {
      created_at: string;
    };
    t.same(payload, row.payload, `${line.action}: the same payload`);
    t.equal(ip, row.ip_address, `${line.action}: the same address`);
  }
  t.equal(lines.find((l) => l.action === 'verification_attempted')?.ip_address, '127.0.0.1', 'MFA entries carry the client address');
});

t.test('AUDIT_LOG_DISABLE_POSTGRES: no rows at all, the log lines are the trail', async (t) => {
  const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_AUDIT_LOG_DISABLE_POSTGRES: 'true' });
  const userId = await exercise(api, 'trail-logs@example.com');
  const count = (await api.db.query('select count(*)::int as n from audit_log_entries')).rows[0].n;
  const admin = await api.request('GET', '/admin/audit', { token: await adminToken() });
  await api.stop();
  t.equal(count, 0, 'nothing written to audit_log_entries');
  t.equal(admin.status, 200);
  t.same(admin.body, [], 'the admin audit list is empty');
  const lines = announced(api, userId);
  t.same(
    lines.map((l) => l.action),
    ACTIONS,
  );
  t.ok(
    lines.every((l) => /^[0-9a-f-]{36}$/.test(l.audit_log_id)),
    'each line still has its own id',
  );
  t.same(new Set(lines.map((l) => l.audit_log_id)).size, lines.length);
});

// The route each action is written by, in this flow.
const ROUTE_OF: Record<string, string> = {
  user_signedup: '/signup',
  login: '/token',
  token_revoked: '/token',
  token_refreshed: '/token',
  factor_in_progress: '/factors',
  challenge_created: '/factors/{factor_id}/challenge',
  verification_attempted: '/factors/{factor_id}/verify',
  logout: '/logout',
};

t.test("each line names its request; the request's own line carries its last entry as auth_event", async (t) => {
  const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  const userId = await exercise(api, 'trail-requests@example.com');
  await api.stop();
  const lines = announced(api, userId);
  const requests = new Map(
    api
      .logs()
      .filter((l) => l.msg === 'request completed')
      .map((l) => [l.request_id as string, l]),
  );
  t.same(
    lines.map((l) => l.action),
    ACTIONS,
  );
  for (const [i, line] of lines.entries()) {
    t.equal(line.user_agent, USER_AGENT, `${line.action}: the client's User-Agent`);
    const request = requests.get(line.request_id ?? '');
    // The first login is the autoconfirmed sign-up's own, in its request; the last token_revoked is the MFA
    // verification's swap of the refresh token, in its request.
    const route =
      i === 1 ? '/signup' : i === ACTIONS.lastIndexOf('token_revoked') ? ROUTE_OF.verification_attempted : ROUTE_OF[line.action];
    t.equal(request?.route, route, `${line.action}: its request_id is that of its ${route} request`);
  }
  const refresh = lines.filter((l) => l.action === 'token_revoked' || l.action === 'token_refreshed');
  t.equal(refresh[0].request_id, refresh[1].request_id, 'the two entries of one refresh share its request');
  for (const [id, request] of requests) {
    const own = lines.filter((l) => l.request_id === id);
    if (own.length === 0) {
      t.equal(request.auth_event, undefined, `${request.route}: no entry, no auth_event`);
      continue;
    }
    const {
      audit_log_id: _,
      ip_address: __,
      created_at: ___,
      request_id: ____,
      user_agent: _____,
      ...last
    } = own[own.length - 1] as Entry & {
      created_at: string;
    };
    t.same(request.auth_event, last, `${request.route}: auth_event is the payload of its last entry (${last.action})`);
  }
});

// A sign-up that sends its confirmation runs its transaction twice: the first attempt rolls back to take a
// send permit (delivery/sending-tx.ts). Only the committed attempt's entry may be logged: a line for the
// rolled-back one would name a row that was never written.
t.test('an entry of a transaction that rolled back is not logged', async (t) => {
  const smtp = await startSmtpServer();
  const api = await startTestService({
    AUTH_SMTP_HOST: '127.0.0.1',
    AUTH_SMTP_PORT: String(smtp.port),
    AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com',
  });
  t.teardown(() => smtp.close());
  const email = 'trail-rollback@example.com';
  const res = await api.request('POST', '/signup', { body: { email, password: 'Secret-password-1' } });
  t.equal(res.status, 200, res.text);
  await smtp.waitForMail(email);
  const rows = (await api.db.query(`select id, payload from audit_log_entries where payload->>'actor_id' = $1`, [res.body.id])).rows;
  await api.stop();
  // By name: the rolled-back attempt created the user under another id.
  const lines = api
    .logs()
    .filter((l) => l.msg === 'audit_event' && l.auth_audit_event?.actor_username === email)
    .map((l) => l.auth_audit_event as Entry);
  t.same(
    lines.map((l) => l.action),
    ['user_confirmation_requested'],
    'one line for the one entry',
  );
  t.same(
    lines.map((l) => l.audit_log_id),
    rows.map((r) => r.id),
    'the line is that of the committed row',
  );
});
