// What DELETE /user/identities/{id} does to the user's addresses (docs/oauth.md#manual-linking): the email is
// kept while a remaining identity carries it, else the best remaining identity's address replaces it
// (provider-verified first, then unverified, then none), every pending token and change sent for the old
// address is dropped, and an address nobody verified is not left confirmed (here without MAILER_AUTOCONFIRM).
// A phone identity takes the phone with it.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { confirmedUser } from './helpers/users.js';

const api = await startTestService({ AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true' });
t.teardown(() => api.stop());

let next = 0;
/** An external identity added straight to the table, created `age` seconds ago (older ones win ties). */
async function addIdentity(userId: string, provider: string, data: Record<string, unknown>, age = 0): Promise<string> {
  const { rows } = await api.db.query(
    `insert into identities (provider_id, user_id, identity_data, provider, created_at)
     values ($1, $2, $3, $4, now() - make_interval(secs => $5)) returning id`,
    [`${provider}-${++next}`, userId, data, provider, age],
  );
  return rows[0].id;
}

const emailIdentityOf = async (userId: string) =>
  (await api.db.query(`select id from identities where user_id = $1 and provider = 'email'`, [userId])).rows[0].id as string;
const userRow = async (userId: string) =>
  (
    await api.db.query(
      `select email, email_confirmed_at, email_change, email_change_sent_at, phone, phone_confirmed_at, phone_change,
              raw_user_meta_data, (select count(*)::int from one_time_tokens o where o.user_id = users.id) as tokens
         from users where id = $1`,
      [userId],
    )
  ).rows[0];
const unlink = (token: string, identityId: string) => api.request('DELETE', `/user/identities/${identityId}`, { token });

t.test('the provider-verified address is promoted before an older unverified one; pending changes and tokens go', async (t) => {
  const s = await confirmedUser(api, 'promote@example.com');
  await addIdentity(s.user.id, 'github', { email: 'promote-unverified@example.com', email_verified: false }, 60);
  await addIdentity(s.user.id, 'google', { email: 'promote-verified@example.com', email_verified: true }, 10);
  await api.db.query(
    `update users set email_change = 'pending@example.com', email_change_sent_at = now(), phone_change = '15550001111' where id = $1`,
    [s.user.id],
  );
  await api.db.query(
    `insert into one_time_tokens (user_id, token_type, token_hash, relates_to) values ($1, 'email_change_token_new', 'h1', 'pending@example.com')`,
    [s.user.id],
  );
  const res = await unlink(s.access_token, await emailIdentityOf(s.user.id));
  t.equal(res.status, 200, res.text);
  const row = await userRow(s.user.id);
  t.equal(row.email, 'promote-verified@example.com');
  t.ok(row.email_confirmed_at, 'an address the provider verified stays confirmed');
  t.equal(row.email_change, null, 'the change asked for the old address is dropped');
  t.equal(row.email_change_sent_at, null);
  t.equal(row.phone_change, null);
  t.equal(row.tokens, 0, 'no link or code sent for the old address still works');
});

t.test('an unverified address promoted without MAILER_AUTOCONFIRM is unconfirmed, and says so in user_metadata', async (t) => {
  const s = await confirmedUser(api, 'unverified-next@example.com');
  await addIdentity(s.user.id, 'github', { email: 'unverified-gh@example.com', email_verified: false });
  const res = await unlink(s.access_token, await emailIdentityOf(s.user.id));
  t.equal(res.status, 200, res.text);
  const row = await userRow(s.user.id);
  t.equal(row.email, 'unverified-gh@example.com');
  t.equal(row.email_confirmed_at, null);
  t.equal(row.raw_user_meta_data.email_verified, false);
  const me = await api.request('GET', '/user', { token: s.access_token });
  t.equal(me.body.email, 'unverified-gh@example.com');
  t.notOk(me.body.email_confirmed_at);
});

t.test('a taken address is skipped for the next one; when all are taken nothing changes', async (t) => {
  await confirmedUser(api, 'taken@example.com');
  const freeHolder = await confirmedUser(api, 'free@example.com');
  const s = await confirmedUser(api, 'skipper@example.com');
  await addIdentity(s.user.id, 'google', { email: 'taken@example.com', email_verified: true }, 60);
  await addIdentity(s.user.id, 'github', { email: 'free@example.com', email_verified: false });
  const emailIdentity = await emailIdentityOf(s.user.id);

  const refused = await unlink(s.access_token, emailIdentity);
  t.same(refused.body, {
    code: 422,
    error_code: 'email_conflict_identity_not_deletable',
    msg: 'Unable to unlink identity due to email conflict',
  });
  t.equal((await userRow(s.user.id)).email, 'skipper@example.com', 'the refusal leaves the user as it was');
  t.equal((await api.db.query('select 1 from identities where id = $1', [emailIdentity])).rowCount, 1, 'and the identity in place');

  await api.db.query('delete from users where id = $1', [freeHolder.user.id]);
  const res = await unlink(s.access_token, emailIdentity);
  t.equal(res.status, 200, res.text);
  t.equal((await userRow(s.user.id)).email, 'free@example.com', 'the verified address another user holds is passed over');
});

t.test('only identities without an address remain: the email goes, unconfirmed', async (t) => {
  const s = await confirmedUser(api, 'no-address-left@example.com');
  await addIdentity(s.user.id, 'twitter', { user_name: 'someone' });
  const res = await unlink(s.access_token, await emailIdentityOf(s.user.id));
  t.equal(res.status, 200, res.text);
  const row = await userRow(s.user.id);
  t.equal(row.email, null);
  t.equal(row.email_confirmed_at, null);
});

t.test('the email stays, confirmed, while another identity carries it', async (t) => {
  const s = await confirmedUser(api, 'carried@example.com');
  await addIdentity(s.user.id, 'github', { email: 'carried@example.com', email_verified: false });
  await addIdentity(s.user.id, 'google', { email: 'carried-other@example.com', email_verified: true }, 60);
  const res = await unlink(s.access_token, await emailIdentityOf(s.user.id));
  t.equal(res.status, 200, res.text);
  const row = await userRow(s.user.id);
  t.equal(row.email, 'carried@example.com');
  t.ok(row.email_confirmed_at);
});

t.test('unlinking the phone identity takes the phone and its confirmation; the email is untouched', async (t) => {
  const s = await confirmedUser(api, 'phoned@example.com');
  await api.db.query(`update users set phone = '15550002222', phone_confirmed_at = now() where id = $1`, [s.user.id]);
  const phone = await addIdentity(s.user.id, 'phone', { phone: '15550002222', phone_verified: true });
  const res = await unlink(s.access_token, phone);
  t.equal(res.status, 200, res.text);
  const row = await userRow(s.user.id);
  t.equal(row.phone, null);
  t.equal(row.phone_confirmed_at, null);
  t.equal(row.email, 'phoned@example.com');
  t.ok(row.email_confirmed_at);
});

t.test("app_metadata.provider becomes the oldest remaining identity's, even when the current one stays, as the original", async (t) => {
  const s = await confirmedUser(api, 'reprovided@example.com');
  // Older than the user's email identity: github is first in line once any identity goes.
  await addIdentity(s.user.id, 'github', { email: 'reprovided@example.com', email_verified: true }, 3600);
  const google = await addIdentity(s.user.id, 'google', { email: 'reprovided@example.com', email_verified: true });
  await api.db.query(
    `update users set raw_app_meta_data = raw_app_meta_data || '{"provider": "email", "providers": ["github", "email", "google"]}' where id = $1`,
    [s.user.id],
  );
  const res = await unlink(s.access_token, google);
  t.equal(res.status, 200, res.text);
  const { rows } = await api.db.query('select raw_app_meta_data from users where id = $1', [s.user.id]);
  t.match(rows[0].raw_app_meta_data, { provider: 'github', providers: ['github', 'email'] });
});
