// Passkeys end to end through the official @supabase/auth-js client (auth.passkey.* and
// auth.admin.passkey.*), as auth-js 2.109's own test/passkey.e2e.test.ts drives them without a browser:
// the client's two-step calls, with the software authenticator standing in for navigator.credentials.
import t from 'tap';
import { AuthApiError, AuthClient, AuthSessionMissingError, GoTrueAdminApi } from '@supabase/auth-js';
import { startTestService } from './helpers/server.js';
import { memoryStorage } from './helpers/auth-client.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { PASSKEY_ENV, RP_ID, newAuthenticator } from './helpers/passkeys.js';
import { withBrowserWebAuthn } from './helpers/browser-webauthn.js';

const api = await startTestService(PASSKEY_ENV);
t.teardown(() => api.stop());
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const client = () =>
  new AuthClient({
    url: api.url,
    storage: memoryStorage(),
    persistSession: true,
    autoRefreshToken: false,
    detectSessionInUrl: false,
    experimental: { passkey: true },
  });
const adminApi = new GoTrueAdminApi({
  url: api.url,
  headers: { Authorization: 'Bearer ' + (await adminToken('service_role')) },
  experimental: { passkey: true },
});

const owner = client();
const authenticator = newAuthenticator();
const signedUp = await owner.signUp({ email: uniqueEmail('passkey-e2e'), password: 'Secret-password-1' });
const userId = signedUp.data.user!.id;

/** Registers a passkey for the owner on `device` through the client; returns its id. */
async function registerOn(device = newAuthenticator()): Promise<string> {
  const { data: options, error } = await owner.passkey.startRegistration();
  if (error) throw error;
  const credential = device.create(options.options as any);
  const created = await owner.passkey.verifyRegistration({ challengeId: options.challenge_id, credential: credential as any });
  if (created.error) throw created.error;
  return created.data.id;
}

const passkeyId = await registerOn(authenticator);

t.test('startRegistration answers WebAuthn creation options', async (t) => {
  const { data, error } = await owner.passkey.startRegistration();
  t.equal(error, null);
  t.match(data!.challenge_id, UUID);
  t.ok(data!.expires_at > Math.floor(Date.now() / 1000));
  t.equal(data!.options.rp.id, RP_ID);
  t.type(data!.options.challenge, 'string');
  t.type(data!.options.user.id, 'string');
  t.ok(data!.options.pubKeyCredParams.some((p: any) => p.alg === -7 && p.type === 'public-key'));
  t.equal(data!.options.authenticatorSelection?.residentKey, 'required');
});

t.test('verifyRegistration creates a passkey; an unknown challenge is webauthn_challenge_not_found', async (t) => {
  const id = await registerOn();
  t.match(id, UUID);
  t.equal((await owner.passkey.delete({ passkeyId: id })).error, null);

  const { data: options } = await owner.passkey.startRegistration();
  const credential = newAuthenticator().create(options!.options as any);
  const { data, error } = await owner.passkey.verifyRegistration({
    challengeId: '00000000-0000-0000-0000-000000000000',
    credential: credential as any,
  });
  t.equal(data, null);
  t.ok(error instanceof AuthApiError);
  t.equal((error as AuthApiError).code, 'webauthn_challenge_not_found');
});

t.test('startRegistration needs a session', async (t) => {
  const { data, error } = await client().passkey.startRegistration();
  t.equal(data, null);
  t.ok(error instanceof AuthSessionMissingError);
});

t.test('list and update', async (t) => {
  const listed = await owner.passkey.list();
  t.equal(listed.error, null);
  t.same(
    listed.data!.map((p) => p.id),
    [passkeyId],
  );
  const updated = await owner.passkey.update({ passkeyId, friendlyName: 'e2e key' });
  t.equal(updated.error, null);
  t.equal(updated.data!.id, passkeyId);
  t.equal(updated.data!.friendly_name, 'e2e key');
  t.equal((await owner.passkey.list()).data![0].friendly_name, 'e2e key');
  const unknown = await owner.passkey.update({ passkeyId: '00000000-0000-0000-0000-000000000000', friendlyName: 'x' });
  t.equal(unknown.data, null);
  t.ok(unknown.error instanceof AuthApiError);
  t.equal((unknown.error as AuthApiError).status, 404);
});

t.test('sign in with the passkey: the client keeps and uses the session', async (t) => {
  const signIn = client();
  const { data: options, error: optionsError } = await signIn.passkey.startAuthentication();
  t.equal(optionsError, null);
  t.match(options!.challenge_id, UUID);
  t.same(options!.options.allowCredentials ?? [], []);
  const assertion = authenticator.get(options!.options as any);
  const { data, error } = await signIn.passkey.verifyAuthentication({ challengeId: options!.challenge_id, credential: assertion as any });
  t.equal(error, null);
  t.equal(data!.user!.id, userId);
  const stored = await signIn.getSession();
  t.equal(stored.data.session?.access_token, data!.session!.access_token);
  const me = await signIn.getUser();
  t.equal(me.error, null);
  t.equal(me.data.user?.id, userId);
  const aal = await signIn.mfa.getAuthenticatorAssuranceLevel();
  t.same(
    aal.data?.currentAuthenticationMethods.map((m) => (typeof m === 'string' ? m : m.method)),
    ['passkey'],
  );
  t.type((await owner.passkey.list()).data![0].last_used_at, 'string');
});

t.test('a replayed assertion is refused', async (t) => {
  const signIn = client();
  const { data: options } = await signIn.passkey.startAuthentication();
  const assertion = authenticator.get(options!.options as any);
  t.equal((await signIn.passkey.verifyAuthentication({ challengeId: options!.challenge_id, credential: assertion as any })).error, null);
  const second = await signIn.passkey.verifyAuthentication({ challengeId: options!.challenge_id, credential: assertion as any });
  t.equal(second.data, null);
  t.equal((second.error as AuthApiError).code, 'webauthn_challenge_not_found');
});

t.test('an authenticator never registered is refused', async (t) => {
  const stranger = newAuthenticator();
  const { data: registration } = await owner.passkey.startRegistration();
  stranger.create(registration!.options as any);
  const signIn = client();
  const { data: options } = await signIn.passkey.startAuthentication();
  const { data, error } = await signIn.passkey.verifyAuthentication({
    challengeId: options!.challenge_id,
    credential: stranger.get(options!.options as any) as any,
  });
  t.equal(data, null);
  t.equal((error as AuthApiError).code, 'webauthn_verification_failed');
});

t.test('admin listPasskeys and deletePasskey', async (t) => {
  const listed = await adminApi.passkey.listPasskeys({ userId });
  t.equal(listed.error, null);
  t.same(
    listed.data!.map((p) => p.id),
    [passkeyId],
  );
  const extra = await registerOn();
  t.equal((await adminApi.passkey.deletePasskey({ userId, passkeyId: extra })).error, null);
  t.same(
    (await adminApi.passkey.listPasskeys({ userId })).data!.map((p) => p.id),
    [passkeyId],
  );
});

t.test('delete removes the passkey, and signing in with it fails', async (t) => {
  t.equal((await owner.passkey.delete({ passkeyId })).error, null);
  t.same((await owner.passkey.list()).data, []);
  const signIn = client();
  const { data: options } = await signIn.passkey.startAuthentication();
  const { data, error } = await signIn.passkey.verifyAuthentication({
    challengeId: options!.challenge_id,
    credential: authenticator.get(options!.options as any) as any,
  });
  t.equal(data, null);
  t.equal((error as AuthApiError).code, 'webauthn_verification_failed');
});

t.test(
  'the one-call flows, registerPasskey() and signInWithPasskey(), with navigator.credentials backed by the authenticator',
  async (t) => {
    const user = client();
    const { data: signedUpAgain } = await user.signUp({ email: uniqueEmail('passkey-one-call'), password: 'Secret-password-1' });
    const device = newAuthenticator();
    const registered = await withBrowserWebAuthn(device, () => user.registerPasskey());
    t.equal(registered.error, null);
    t.match(registered.data!.id, UUID);

    const signIn = client();
    const events: string[] = [];
    signIn.onAuthStateChange((event) => void events.push(event));
    const signedIn = await withBrowserWebAuthn(device, () => signIn.signInWithPasskey());
    t.equal(signedIn.error, null);
    t.equal(signedIn.data!.user!.id, signedUpAgain.user!.id);
    t.ok(events.includes('SIGNED_IN'));
    t.equal((await signIn.getUser()).data.user?.id, signedUpAgain.user!.id);

    // Without WebAuthn in the environment the client says so before calling the service.
    const unsupported = await client().signInWithPasskey();
    t.equal(unsupported.data, null);
    t.match(unsupported.error?.message, /does not support WebAuthn/);
  },
);
