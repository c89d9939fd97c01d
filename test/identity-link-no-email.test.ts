// Linking an identity to a signed-in user who has no email yet (an anonymous user), through auth-js
// linkIdentity with a Google id_token (docs/oauth.md#manual-linking): the identity's address becomes the
// email, confirmed when Google verified it; an unverified one is committed with the identity and mailed for
// confirmation, and the link answers 422 email_not_confirmed; an address another user holds refuses the
// link (400 email_exists) and leaves nothing behind. Without MAILER_AUTOCONFIRM, with a real SMTP server.
import t from 'tap';
import { startMailStack } from './helpers/passwordless.js';
import { startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { providerEnv } from './helpers/oauth.js';
import { authClient } from './helpers/auth-client.js';
import { confirmedUser } from './helpers/users.js';

const google = await startOidcProvider();
const stack = await startMailStack({
  ...providerEnv('google', { clientId: google.clientId, secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
  AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
});
const { api, smtp } = stack;
t.teardown(async () => {
  await stack.stop();
  await google.stop();
});

async function anonymous() {
  const auth = authClient(api.url);
  const { data, error } = await auth.signInAnonymously();
  if (error) throw error;
  return { auth, id: data.user!.id };
}
const userRow = async (id: string) =>
  (
    await api.db.query(
      `select email, email_confirmed_at, is_anonymous, raw_user_meta_data,
              (select array_agg(provider order by provider) from identities i where i.user_id = users.id) as providers
         from users where id = $1`,
      [id],
    )
  ).rows[0];

t.test('a verified address: the anonymous user becomes permanent with it, confirmed', async (t) => {
  const auth = authClient(api.url);
  const anon = await auth.signInAnonymously({ options: { data: { theme: 'dark' } } });
  const id = anon.data.user!.id;
  const token = await google.signIdToken({
    sub: 'g-verified',
    email: 'Linked-Verified@example.com',
    email_verified: true,
    name: 'Linked Person',
  });
  const { data, error } = await auth.linkIdentity({ provider: 'google', token });
  t.equal(error, null);
  t.equal(data.user?.email, 'linked-verified@example.com');
  t.equal(data.user?.is_anonymous, false);
  const row = await userRow(id);
  t.ok(row.email_confirmed_at);
  t.strictSame(row.raw_user_meta_data, { theme: 'dark', email_verified: true }, "the user's own metadata, not the provider's claims");
  t.same(row.providers, ['google']);
});

t.test('an unverified address: linked and mailed for confirmation, then 422 email_not_confirmed; still anonymous', async (t) => {
  const { auth, id } = await anonymous();
  const token = await google.signIdToken({ sub: 'g-unverified', email: 'linked-unverified@example.com', email_verified: false });
  const { error } = await auth.linkIdentity({ provider: 'google', token });
  t.equal(error?.status, 422);
  t.equal(error?.code, 'email_not_confirmed');
  t.equal(error?.message, 'Unverified email with google. A confirmation email has been sent to your google email');
  const mail = await smtp.waitForMail('linked-unverified@example.com');
  t.match(mail.text, /verify/i, 'the confirmation mail went to the new address');
  const row = await userRow(id);
  t.equal(row.email, 'linked-unverified@example.com', 'committed with the refusal');
  t.equal(row.email_confirmed_at, null);
  t.equal(row.is_anonymous, true);
  t.strictSame(row.raw_user_meta_data, { email_verified: false }, 'marked unverified, nothing of the claims');
  t.same(row.providers, ['google']);
});

t.test('a verified address another user holds: 400 email_exists, and the link is undone', async (t) => {
  await confirmedUser(api, 'linked-held@example.com');
  const { auth, id } = await anonymous();
  const token = await google.signIdToken({ sub: 'g-held', email: 'linked-held@example.com', email_verified: true });
  const { error } = await auth.linkIdentity({ provider: 'google', token });
  t.equal(error?.status, 400);
  t.equal(error?.code, 'email_exists');
  t.equal(error?.message, 'A user with this email address has already been registered');
  const row = await userRow(id);
  t.equal(row.email, null);
  t.equal(row.is_anonymous, true);
  t.equal(row.providers, null, 'no identity was added');
});

t.test('a user who has an email keeps it when linking an identity with another address', async (t) => {
  const s = await confirmedUser(api, 'keeps-own@example.com');
  const auth = authClient(api.url);
  await auth.setSession({ access_token: s.access_token, refresh_token: s.refresh_token });
  const token = await google.signIdToken({ sub: 'g-other', email: 'other-address@example.com', email_verified: true });
  const { data, error } = await auth.linkIdentity({ provider: 'google', token });
  t.equal(error, null);
  t.equal(data.user?.email, 'keeps-own@example.com');
  t.same((await userRow(s.user.id)).providers, ['email', 'google']);
});

t.test('linking by id_token is audited as identity_linked alone, not also as a login', async (t) => {
  const { auth, id } = await anonymous();
  const token = await google.signIdToken({ sub: 'g-audited', email: 'linked-audited@example.com', email_verified: true });
  t.equal((await auth.linkIdentity({ provider: 'google', token })).error, null);
  const { rows } = await api.db.query(
    `select payload->>'action' as action from audit_log_entries where payload->>'actor_id' = $1 order by created_at`,
    [id],
  );
  t.same(
    rows.map((r) => r.action),
    ['identity_linked'],
    'the anonymous sign-up writes nothing; the link writes one entry',
  );
});

t.test('link_identity without an Authorization header: the grant refuses it in its OAuth style, before the provider', async (t) => {
  const token = await google.signIdToken({ sub: 'g-no-bearer', email: 'no-bearer@example.com', email_verified: true });
  for (const provider of ['google', 'a-provider-that-does-not-exist']) {
    const res = await api.request('POST', '/token?grant_type=id_token', { body: { provider, id_token: token, link_identity: true } });
    t.equal(res.status, 400, provider);
    t.same(
      res.body,
      { error: 'invalid request', error_description: 'Linking requires a valid user access token in Authorization' },
      provider,
    );
  }
  t.equal((await api.db.query(`select count(*)::int as n from identities where provider_id = 'g-no-bearer'`)).rows[0].n, 0);
});

t.test("a link re-derives app_metadata's providers from the identities, oldest first, as the original does", async (t) => {
  const user = await confirmedUser(api);
  // What an earlier write may leave there (an identity added without touching app_metadata, a hand edit).
  await api.db.query(`update users set raw_app_meta_data = '{"provider": "stale", "providers": ["stale"], "plan": "pro"}' where id = $1`, [
    user.user.id,
  ]);
  const auth = authClient(api.url);
  await auth.setSession({ access_token: user.access_token, refresh_token: user.refresh_token });
  const token = await google.signIdToken({ sub: 'g-rederived', email: user.user.email, email_verified: true });
  const { data, error } = await auth.linkIdentity({ provider: 'google', token });
  t.equal(error, null);
  t.strictSame(data.user?.app_metadata, { provider: 'email', providers: ['email', 'google'], plan: 'pro' });
});
