// Where audit entries go (docs/users-and-audit.md#audit-log): each one is a row of audit_log_entries and a
// log line `audit_event` carrying the same entry (its id, payload and address), as the original logs them;
// with AUDIT_LOG_DISABLE_POSTGRES the rows are left out and the log lines are the whole trail. Driven
// through the real auth-js client: sign-up, password sign-in, refresh, MFA verification, logout.
import t from 'tap';
import { startTestService, type TestService } from './helpers/server.js';
import { authClient } from './helpers/auth-client.js';
import { totpCode } from './helpers/mfa.js';
import { adminToken } from './helpers/admin.js';

type Entry = { audit_log_id: string; action: string; actor_id: string; ip_address: string; log_type: string; traits?: unknown };

/** A user's life through auth-js; the actions it must leave, in order. */
async function exercise(api: TestService, email: string): Promise<string> {
  const auth = authClient(api.url);
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
  'user_signedup',
  'login',
  'token_revoked',
  'token_refreshed',
  'factor_in_progress',
  'challenge_created',
  'verification_attempted',
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
    const { audit_log_id: _, ip_address: ip, created_at: __, ...payload } = line as Entry & { created_at: string };
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
