// Races of PUT /user and of POST /signup, put in a fixed order rather than left to chance. PUT /user: repeats
// of one update queued behind the user's row lock must each decide "is this a change?" on the row as they
// lock it, so they end as the same requests sent one after another (one take, no change mail to the address
// the user already holds). POST /signup: a sign-up whose insert loses to a concurrent one of the same
// address (held in its before-user-created hook while the other commits) answers as a repeat sent after
// that one, never with the winner's user.
import t from 'tap';
import { startTestService, type Reply } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { newHookSecret, startHookServer } from './helpers/hook-server.js';
import { inOrderBehindUserLock } from './helpers/row-lock.js';
import { signUp, uniqueEmail } from './helpers/accounts.js';

const smtp = await startSmtpServer();
const hooks = await startHookServer();
const beforeUserCreated = (path: string) => ({
  AUTH_HOOK_BEFORE_USER_CREATED_ENABLED: 'true',
  AUTH_HOOK_BEFORE_USER_CREATED_URI: `${hooks.url}${path}`,
  AUTH_HOOK_BEFORE_USER_CREATED_SECRETS: `${newHookSecret()}|${hooks.secret}`,
});
const mailer = {
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com',
};
const api = await startTestService({
  ...mailer,
  ...beforeUserCreated('/auto'),
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_SMS_AUTOCONFIRM: 'true',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
});
// Sign-ups left to confirm: a repeat re-sends the confirmation (or is refused by its interval).
const pending = await startTestService({ ...mailer, ...beforeUserCreated('/pending') });
t.teardown(async () => {
  await api.stop();
  await pending.stop();
  await hooks.close();
  await smtp.close();
});
hooks.on('/auto', () => ({ body: {} }));
hooks.on('/pending', () => ({ body: {} }));

const put = (token: string, body: unknown) => () => api.request('PUT', '/user', { token, body });

/** `requests` queued behind the user's row lock in order, then let go; their replies. */
const behindLock = (userId: string, requests: Array<() => Promise<Reply>>) => inOrderBehindUserLock(api.db, userId, requests);

const userModified = async (id: string) =>
  (
    await api.db.query(
      `select count(*)::int as n from audit_log_entries where payload->>'actor_id' = $1 and payload->>'action' = 'user_modified'`,
      [id],
    )
  ).rows[0].n;

t.test('PUT /user: an anonymous user’s repeated email under MAILER_AUTOCONFIRM is taken once, no change mail', async (t) => {
  const anon = (await api.request('POST', '/signup', { body: {} })).body;
  const email = uniqueEmail('race-anon');
  const replies = await behindLock(
    anon.user.id,
    [1, 2, 3].map(() => put(anon.access_token, { email })),
  );
  t.strictSame(
    replies.map((r) => [r.status, r.body.email, r.body.is_anonymous]),
    [1, 2, 3].map(() => [200, email, false]),
  );
  const { rows } = await api.db.query('select email, email_change, email_change_sent_at from users where id = $1', [anon.user.id]);
  t.equal(rows[0].email, email);
  t.notOk(rows[0].email_change, 'no email change pending to the address the user holds');
  t.equal(rows[0].email_change_sent_at, null);
  const tokens = await api.db.query(`select token_type from one_time_tokens where user_id = $1`, [anon.user.id]);
  t.strictSame(tokens.rows, [], 'no email-change token');
  t.strictSame(
    smtp.mails.filter((m) => m.envelopeTo.includes(email)).map((m) => m.subject),
    [],
    'nothing mailed to the address taken',
  );
  t.equal(await userModified(anon.user.id), 4, 'the take writes two entries, each repeat one, as in sequence');
});

t.test('PUT /user: a repeated phone under SMS_AUTOCONFIRM is taken once', async (t) => {
  const s = await signUp(api, uniqueEmail('race-phone'));
  const phone = '14155550177';
  const replies = await behindLock(
    s.user.id,
    [1, 2, 3].map(() => put(s.access_token, { phone: `+${phone}` })),
  );
  t.strictSame(
    replies.map((r) => [r.status, r.body.phone]),
    [1, 2, 3].map(() => [200, phone]),
  );
  const identities = await api.db.query(`select provider from identities where user_id = $1 order by provider`, [s.user.id]);
  t.strictSame(
    identities.rows.map((r) => r.provider),
    ['email', 'phone'],
  );
  t.equal(await userModified(s.user.id), 4, 'the take writes two entries, each repeat one, as in sequence');
});

/**
 * Two sign-ups of one address, the first held in its before-user-created hook (past its look-up, which found
 * nobody) until the second has committed, so the first's insert loses. Resolves [loser, winner].
 */
async function lostInsert(service: typeof api, path: string, body: Record<string, unknown>): Promise<[Reply, Reply]> {
  let asked!: () => void;
  const firstAsked = new Promise<void>((resolve) => (asked = resolve));
  let letGo!: () => void;
  const held = new Promise<void>((resolve) => (letGo = resolve));
  hooks.once(path, async () => {
    asked();
    await held;
    return { body: {} };
  });
  const loser = service.request('POST', '/signup', { body });
  await firstAsked;
  const winner = await service.request('POST', '/signup', { body });
  letGo();
  return [await loser, winner];
}

/** The user's audit actions, sorted: an entry's time is its transaction's start, and the loser's began first. */
const auditActions = async (service: typeof api, email: string) =>
  (
    await service.db.query(
      `select a.payload->>'action' as action from audit_log_entries a join users u on u.id::text = a.payload->>'actor_id'
        where u.email = $1`,
      [email],
    )
  ).rows
    .map((r) => r.action)
    .sort();

t.test('POST /signup under autoconfirm: the sign-up that loses the insert answers user_already_exists', async (t) => {
  const email = uniqueEmail('race-signup');
  const body = { email, password: 'Secret-password-1' };
  const before = hooks.callsTo('/auto').length;
  const [loser, winner] = await lostInsert(api, '/auto', body);
  t.equal(winner.status, 200);
  t.ok(winner.body.access_token, 'the winner is signed in');
  t.equal(loser.status, 400, loser.text);
  t.equal(loser.body.error_code, 'user_already_exists');
  t.notOk(loser.body.id ?? loser.body.user, 'no user object');
  t.equal(hooks.callsTo('/auto').length - before, 2, 'the hook is asked once by each, not again by the loser');
  const again = await api.request('POST', '/signup', { body });
  t.strictSame([again.status, again.body.error_code], [loser.status, loser.body.error_code], 'as a sequential repeat');
  t.strictSame(await auditActions(api, email), ['login', 'user_repeated_signup', 'user_repeated_signup', 'user_signedup']);
});

t.test('POST /signup left to confirm: the sign-up that loses the insert answers as a repeat sent after it', async (t) => {
  const email = uniqueEmail('race-pending');
  const body = { email, password: 'Secret-password-1' };
  const before = hooks.callsTo('/pending').length;
  const [loser, winner] = await lostInsert(pending, '/pending', body);
  t.equal(winner.status, 200);
  t.equal(winner.body.email, email);
  const again = await pending.request('POST', '/signup', { body });
  t.strictSame(
    [loser.status, loser.body.error_code],
    [again.status, again.body.error_code],
    'the confirmation is not sent again within its interval, as for a sequential repeat',
  );
  t.not(loser.status, 200, loser.text);
  t.equal(hooks.callsTo('/pending').length - before, 2, 'the hook is asked once by each, not again by the loser');
  t.equal(smtp.mails.filter((m) => m.envelopeTo.includes(email)).length, 1, 'one confirmation mail, the winner’s');
  // The repeats' entries go with their refused transactions, as a sequential repeat's does.
  t.strictSame(await auditActions(pending, email), ['user_confirmation_requested']);
});
