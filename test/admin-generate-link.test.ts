// POST /admin/generate_link (REFERENCE §2.15): every link type returns the link a mail would carry,
// sends nothing, and following the link (GET /verify) signs the user in; the two email_change links
// together change the address.
import t, { type Test } from 'tap';
import { startTestService, type TestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { adminToken, fragmentOf } from './helpers/admin.js';
import { behindDeletion, inOrderBehindUserLock } from './helpers/row-lock.js';

const smtp = await startSmtpServer();
const api: TestService = await startTestService({
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
});
const admin = await adminToken();
const SITE = 'http://localhost:3000';

const generate = (body: Record<string, unknown>, query = '') => api.request('POST', `/admin/generate_link${query}`, { token: admin, body });
const follow = (actionLink: string) => {
  const u = new URL(actionLink);
  return api.request('GET', u.pathname + u.search);
};
const signIn = (email: string, password: string) => api.request('POST', '/token?grant_type=password', { body: { email, password } });
async function confirmedUser(email: string) {
  const res = await api.request('POST', '/admin/users', { token: admin, body: { email, password: 'link-test-pass', email_confirm: true } });
  if (res.status !== 200) throw new Error(res.text);
  return res.body;
}

/** Follows the link and checks that it lands on SITE_URL with a working session of `type`. */
async function assertFollowedToSession(t: Test, link: string, type: string, email: string, target = SITE) {
  const res = await follow(link);
  t.equal(res.status, 303);
  const location = res.headers.get('location')!;
  t.ok(location.startsWith(`${target}#`), `redirects to ${target}`);
  const fragment = fragmentOf(location);
  t.strictSame(Object.keys(fragment).sort(), ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'sb', 'token_type', 'type']);
  t.equal(fragment.type, type);
  const me = await api.request('GET', '/user', { token: fragment.access_token });
  t.equal(me.status, 200);
  t.equal(me.body.email, email);
  t.ok(me.body.email_confirmed_at, 'the address is confirmed');
  const reuse = await follow(link);
  t.equal(fragmentOf(reuse.headers.get('location')).error_code, 'otp_expired', 'a link works once');
}

t.test('signup with password and data: the whole answer, the link followed, the password usable', async (t) => {
  const res = await generate({ type: 'signup', email: 'New@Example.com', password: 'signup-pass', data: { full_name: 'Newton' } });
  t.equal(res.status, 200);
  const b = res.body;
  t.match(b.email_otp, /^\d{6}$/);
  t.match(b.hashed_token, /^[0-9a-f]{56}$/);
  t.equal(b.action_link, `${api.url}/verify?token=${b.hashed_token}&type=signup&redirect_to=${SITE}`);
  t.strictSame(
    [b.verification_type, b.redirect_to, b.email, b.aud, b.role],
    ['signup', SITE, 'new@example.com', 'authenticated', 'authenticated'],
  );
  t.match(b, {
    id: /^[0-9a-f-]{36}$/,
    confirmation_sent_at: String,
    created_at: String,
    user_metadata: { full_name: 'Newton' },
    app_metadata: { provider: 'email', providers: ['email'] },
    identities: [{ provider: 'email' }],
  });
  t.notOk('email_confirmed_at' in b);
  t.equal((await signIn('new@example.com', 'signup-pass')).body.error_code, 'email_not_confirmed');
  await assertFollowedToSession(t, b.action_link, 'signup', 'new@example.com');
  t.equal((await signIn('new@example.com', 'signup-pass')).status, 200);
});

t.test('signup refusals: no password for a new user, a weak one, a confirmed address', async (t) => {
  const none = await generate({ type: 'signup', email: 'nopass@example.com' });
  t.strictSame([none.status, none.body], [400, { code: 400, error_code: 'validation_failed', msg: 'Signup requires a valid password' }]);
  const weak = await generate({ type: 'signup', email: 'weak@example.com', password: '1' });
  t.equal(weak.status, 422);
  t.equal(weak.body.error_code, 'weak_password');
  await confirmedUser('confirmed@example.com');
  for (const type of ['signup', 'invite']) {
    const dup = await generate({ type, email: 'confirmed@example.com', password: 'whatever-pass' });
    t.strictSame(
      [dup.status, dup.body],
      [422, { code: 422, error_code: 'email_exists', msg: 'A user with this email address has already been registered' }],
      type,
    );
  }
});

t.test('magiclink for a known user uses the recovery path and signs in as magiclink', async (t) => {
  await confirmedUser('magic@example.com');
  const res = await generate({ type: 'magiclink', email: 'magic@example.com' });
  t.equal(res.status, 200);
  t.equal(res.body.verification_type, 'magiclink');
  t.equal(res.body.action_link, `${api.url}/verify?token=${res.body.hashed_token}&type=magiclink&redirect_to=${SITE}`);
  t.match(res.body, { recovery_sent_at: String });
  await assertFollowedToSession(t, res.body.action_link, 'magiclink', 'magic@example.com');
});

t.test('magiclink for an unknown address becomes a signup link', async (t) => {
  const res = await generate({ type: 'magiclink', email: 'stranger@example.com' });
  t.equal(res.status, 200);
  t.equal(res.body.verification_type, 'signup');
  t.match(res.body.action_link, /&type=signup&/);
  await assertFollowedToSession(t, res.body.action_link, 'signup', 'stranger@example.com');
});

t.test('recovery: link and email_otp both work; unknown address is a 404', async (t) => {
  await confirmedUser('forgot@example.com');
  const res = await generate({ type: 'recovery', email: 'forgot@example.com' });
  t.equal(res.status, 200);
  t.equal(res.body.action_link, `${api.url}/verify?token=${res.body.hashed_token}&type=recovery&redirect_to=${SITE}`);
  await assertFollowedToSession(t, res.body.action_link, 'recovery', 'forgot@example.com');
  const again = await generate({ type: 'recovery', email: 'forgot@example.com' });
  const byCode = await api.request('POST', '/verify', {
    body: { type: 'recovery', email: 'forgot@example.com', token: again.body.email_otp },
  });
  t.equal(byCode.status, 200);
  t.ok(byCode.body.access_token);
  const unknown = await generate({ type: 'recovery', email: 'nobody@example.com' });
  t.strictSame([unknown.status, unknown.body], [404, { code: 404, error_code: 'user_not_found', msg: 'User with this email not found' }]);
});

t.test('invite creates an invited user without a password; the link signs in with type=invite', async (t) => {
  const res = await generate({ type: 'invite', email: 'guest@example.com', data: { team: 'blue' } });
  t.equal(res.status, 200);
  t.match(res.body, { invited_at: String, confirmation_sent_at: String, user_metadata: { team: 'blue' }, verification_type: 'invite' });
  // As the original writes them: the metadata exactly as sent, and the identity only its claims.
  const written = await api.db.query(
    `select u.raw_user_meta_data as meta, i.identity_data as identity from users u join identities i on i.user_id = u.id where u.email = $1`,
    ['guest@example.com'],
  );
  t.strictSame(written.rows[0].meta, { team: 'blue' });
  t.strictSame(Object.keys(written.rows[0].identity).sort(), ['email', 'email_verified', 'phone_verified', 'sub']);
  t.equal(res.body.action_link, `${api.url}/verify?token=${res.body.hashed_token}&type=invite&redirect_to=${SITE}`);
  const { rows } = await api.db.query('select encrypted_password from users where id = $1', [res.body.id]);
  t.equal(rows[0].encrypted_password, null);
  await assertFollowedToSession(t, res.body.action_link, 'invite', 'guest@example.com');
});

t.test('email_change_current and email_change_new: link type email_change, tokens bound to each address', async (t) => {
  const user = await confirmedUser('old@example.com');
  const current = await generate({ type: 'email_change_current', email: 'old@example.com', new_email: 'New-Address@example.com' });
  t.equal(current.status, 200);
  t.equal(current.body.new_email, 'new-address@example.com');
  t.match(current.body, { email_change_sent_at: String, verification_type: 'email_change_current' });
  t.equal(current.body.action_link, `${api.url}/verify?token=${current.body.hashed_token}&type=email_change&redirect_to=${SITE}`);
  const next = await generate({ type: 'email_change_new', email: 'old@example.com', new_email: 'new-address@example.com' });
  t.equal(next.status, 200);
  t.match(next.body.action_link, /&type=email_change&/);
  const { rows } = await api.db.query('select token_type, relates_to from one_time_tokens where user_id = $1 order by token_type', [
    user.id,
  ]);
  t.strictSame(rows, [
    { token_type: 'email_change_token_current', relates_to: 'old@example.com' },
    { token_type: 'email_change_token_new', relates_to: 'new-address@example.com' },
  ]);
  await confirmedUser('occupied@example.com');
  const dup = await generate({ type: 'email_change_new', email: 'old@example.com', new_email: 'occupied@example.com' });
  t.strictSame([dup.status, dup.body.error_code], [422, 'email_exists']);
  const unknown = await generate({ type: 'email_change_new', email: 'ghost@example.com', new_email: 'x@example.com' });
  t.strictSame([unknown.status, unknown.body.error_code], [404, 'user_not_found']);
});

t.test("email_change to an address that is another user's identity email: 422 email_exists, nothing stamped", async (t) => {
  const mover = await confirmedUser('identity-mover@example.com');
  const holder = await confirmedUser('identity-holder@example.com');
  await api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ($1, $2, $3, 'github')`, [
    `gh-${holder.id}`,
    holder.id,
    { sub: `gh-${holder.id}`, email: 'held-by-github@example.com' },
  ]);
  for (const type of ['email_change_new', 'email_change_current']) {
    const res = await generate({ type, email: 'identity-mover@example.com', new_email: 'Held-By-GitHub@example.com' });
    t.strictSame(
      res.body,
      { code: 422, error_code: 'email_exists', msg: 'A user with this email address has already been registered' },
      type,
    );
  }
  const { rows } = await api.db.query('select email_change, email_change_sent_at from users where id = $1', [mover.id]);
  t.strictSame(rows, [{ email_change: null, email_change_sent_at: null }]);
  // The holder may move its own account onto the address its identity carries.
  const own = await generate({ type: 'email_change_new', email: 'identity-holder@example.com', new_email: 'held-by-github@example.com' });
  t.equal(own.status, 200, own.text);
});

t.test('following both email_change links changes the address: each link carries the token its side stores', async (t) => {
  // The original's release answers email_change_new with a hashed_token made from the current address,
  // which matches no stored token (a fix is proposed upstream); this service returns the new side's.
  await confirmedUser('moving@example.com');
  const current = await generate({ type: 'email_change_current', email: 'moving@example.com', new_email: 'moved@example.com' });
  const next = await generate({ type: 'email_change_new', email: 'moving@example.com', new_email: 'moved@example.com' });
  t.not(next.body.hashed_token, current.body.hashed_token);
  const first = await follow(next.body.action_link);
  t.equal(first.status, 303);
  t.match(
    first.headers.get('location'),
    /#message=Confirmation\+link\+accepted\.\+Please\+proceed\+to\+confirm\+link\+sent\+to\+the\+other\+email&sb=$/,
  );
  await assertFollowedToSession(t, current.body.action_link, 'email_change', 'moved@example.com');
  const { rows } = await api.db.query(`select email, email_change from users where email in ('moving@example.com', 'moved@example.com')`);
  t.strictSame(rows, [{ email: 'moved@example.com', email_change: null }]);
});

t.test('redirect_to: an allowed body value is used, a foreign one falls back to SITE_URL', async (t) => {
  await confirmedUser('redirect@example.com');
  const allowed = await generate({ type: 'magiclink', email: 'redirect@example.com', redirect_to: `${SITE}/welcome` });
  t.equal(allowed.body.redirect_to, `${SITE}/welcome`);
  t.match(allowed.body.action_link, /&redirect_to=http:\/\/localhost:3000\/welcome$/);
  await assertFollowedToSession(t, allowed.body.action_link, 'magiclink', 'redirect@example.com', `${SITE}/welcome`);
  const foreign = await generate({ type: 'magiclink', email: 'redirect@example.com', redirect_to: 'https://evil.example/steal' });
  t.equal(foreign.body.redirect_to, SITE);
});

t.test('bad type and bad email are 400s; nothing was ever mailed', async (t) => {
  const type = await generate({ type: 'sms', email: 'a@example.com' });
  t.strictSame(
    [type.status, type.body],
    [400, { code: 400, error_code: 'validation_failed', msg: 'Invalid email action link type requested: sms' }],
  );
  const email = await generate({ type: 'recovery', email: 'nope' });
  t.strictSame([email.status, email.body.error_code], [400, 'validation_failed']);
  t.equal(smtp.mails.length, 0, 'generate_link sends no mail');
});

t.test('a user deleted while the request waits for its row: 404 user_not_found, not a 500', async (t) => {
  for (const soft of [false, true]) {
    const email = `deleted-meanwhile-${soft}@example.com`;
    const id = (await api.request('POST', '/admin/users', { token: admin, body: { email, email_confirm: true } })).body.id;
    // The deletion waits for the row first; generate_link, past its lookup, behind it.
    const res = await behindDeletion(api, id, soft, () => generate({ type: 'recovery', email }));
    t.strictSame(
      [res.status, res.body],
      [404, { code: 404, error_code: 'user_not_found', msg: 'User with this email not found' }],
      soft ? 'soft-deleted' : 'deleted',
    );
  }
});

t.test(
  "each link type is audited as the original audits it: recovery as the user's request, invite as the admin's, the rest not",
  async (t) => {
    const entriesOf = async (userId: string) =>
      (
        await api.db.query(
          `select payload from audit_log_entries where payload->>'actor_id' = $1 or payload->'traits'->>'user_id' = $1 order by created_at`,
          [userId],
        )
      ).rows.map((r: any) => r.payload);
    const existing = (
      await api.request('POST', '/admin/users', { token: admin, body: { email: 'audited-links@example.com', email_confirm: true } })
    ).body.id;
    const before = (await entriesOf(existing)).length;
    for (const type of ['recovery', 'magiclink']) t.equal((await generate({ type, email: 'audited-links@example.com' })).status, 200);
    const recoveries = (await entriesOf(existing)).slice(before);
    t.equal(recoveries.length, 2);
    for (const entry of recoveries) {
      t.match(entry, {
        action: 'user_recovery_requested',
        log_type: 'user',
        actor_id: existing,
        actor_username: 'audited-links@example.com',
      });
      t.notOk('traits' in entry, 'no traits');
    }

    const afterRecoveries = (await entriesOf(existing)).length;
    t.equal(
      (await generate({ type: 'email_change_new', email: 'audited-links@example.com', new_email: 'audited-new@example.com' })).status,
      200,
    );
    t.equal((await entriesOf(existing)).length, afterRecoveries, 'an email-change link: no entry');

    const signup = await generate({ type: 'signup', email: 'audited-signup@example.com', password: 'Secret-password-1' });
    t.equal(signup.status, 200);
    t.strictSame(await entriesOf(signup.body.id), [], 'a signup link: no entry');

    const invite = await generate({ type: 'invite', email: 'audited-invite@example.com' });
    t.equal(invite.status, 200);
    const invited = await entriesOf(invite.body.id);
    t.equal(invited.length, 1);
    t.match(invited[0], {
      action: 'user_invited',
      log_type: 'team',
      actor_id: '00000000-0000-0000-0000-000000000000',
      actor_username: 'service_role',
      traits: { user_id: invite.body.id, user_email: 'audited-invite@example.com' },
    });
    t.notOk('link_type' in invited[0].traits);
  },
);

t.test('a user whose address an admin changes while the request waits for its row: answered as the address is now', async (t) => {
  // generate_link finds the user by the old address, then waits for its row behind an admin's change of the
  // address: a link for the old address must not sign anyone into the account that no longer holds it.
  const moved = async (label: string) => {
    const from = `moved-from-${label}@example.com`;
    const id = (await api.request('POST', '/admin/users', { token: admin, body: { email: from, email_confirm: true } })).body.id;
    return { from, to: `moved-to-${label}@example.com`, id };
  };
  const behindChange = async (u: { from: string; to: string; id: string }, body: Record<string, unknown>) => {
    const [changed, res] = await inOrderBehindUserLock(api.db, u.id, [
      () => api.request('PUT', `/admin/users/${u.id}`, { token: admin, body: { email: u.to } }),
      () => generate({ email: u.from, ...body }),
    ]);
    t.equal(changed.status, 200, 'the change went first');
    return res;
  };

  const recovery = await moved('recovery');
  const res = await behindChange(recovery, { type: 'recovery' });
  t.strictSame(
    [res.status, res.body],
    [404, { code: 404, error_code: 'user_not_found', msg: 'User with this email not found' }],
    'recovery: no user holds the old address now',
  );
  const tokens = await api.db.query('select 1 from one_time_tokens where user_id = $1', [recovery.id]);
  t.equal(tokens.rowCount, 0, 'no token issued for the moved user');

  const magic = await moved('magic');
  const signedUp = await behindChange(magic, { type: 'magiclink' });
  t.equal(signedUp.status, 200);
  t.equal(signedUp.body.verification_type, 'signup', 'a magic link for an address no one holds signs it up');
  t.equal(signedUp.body.email, magic.from);
  t.not(signedUp.body.id, magic.id, 'a new user, not the one that moved away');
  const account = await api.request('GET', `/admin/users/${magic.id}`, { token: admin });
  t.equal(account.body.email, magic.to, 'the moved user keeps its new address');
});
