// SESSIONS_ALLOW_LOW_AAL (docs/tokens-and-sessions.md#session-limits): a session still at aal1 while its
// user has a verified MFA factor lives that long from its creation. Its access tokens expire by then (exp
// capped, expires_in what is left), the refresh grant refuses it afterwards with the original's message,
// and so does every bearer check. aal2 sessions and users without a verified factor are untouched, and
// with the setting unset nothing changes. Time passes by moving the session's created_at back in the
// database, never by waiting.
import t from 'tap';
import { startTestService, type TestService } from './helpers/server.js';
import { refresh, signIn, signUp, type Session } from './helpers/accounts.js';
import { authClient } from './helpers/auth-client.js';
import { adminToken } from './helpers/admin.js';
import { challenge, claimsOf, enrollTotp, totpCode, verifiedTotp, verify } from './helpers/mfa.js';

const WINDOW = 600; // 10 minutes
const lowAal = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_SESSIONS_ALLOW_LOW_AAL: '10m' });
const unset = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(async () => {
  await lowAal.stop();
  await unset.stop();
});

const LOW_AAL = {
  code: 400,
  error_code: 'session_expired',
  msg: 'Invalid Refresh Token: Session Expired (Low AAL: User Needs MFA Verification)',
};
const BEARER_ENDED = { code: 403, error_code: 'session_expired', msg: 'Session is no longer valid' };
const PASSWORD = 'Secret-password-1';

const sessionOf = (s: { access_token: string }) => claimsOf(s.access_token).session_id as string;
const getUser = (api: TestService, s: { access_token: string }) => api.request('GET', '/user', { token: s.access_token });

/** The session's created_at, in whole seconds since the epoch (what the cap counts from). */
async function createdAt(api: TestService, s: { access_token: string }): Promise<number> {
  const { rows } = await api.db.query('select extract(epoch from created_at)::float8 as at from sessions where id = $1', [sessionOf(s)]);
  return rows[0].at;
}

/** Moves the session's creation `ago` back (its first token with it). */
async function age(api: TestService, s: { access_token: string }, ago: string) {
  await api.db.query(`update sessions set created_at = created_at - $2::interval where id = $1`, [sessionOf(s), ago]);
  await api.db.query(
    `update refresh_tokens set created_at = created_at - $2::interval, updated_at = updated_at - $2::interval where session_id = $1`,
    [sessionOf(s), ago],
  );
}

/** A user with a verified TOTP factor: its aal2 session (from the factor's verification) and the factor. */
async function mfaUser(api: TestService) {
  const signedUp = await signUp(api);
  const { factor, session } = await verifiedTotp(api, signedUp.access_token);
  return { email: signedUp.user.email, factor, aal2: session as Session };
}

t.test('an aal1 sign-in of a user with a verified factor: exp capped at created_at + the window', async (t) => {
  const { email } = await mfaUser(lowAal);
  const client = authClient(lowAal.url);
  const { data, error } = await client.signInWithPassword({ email, password: PASSWORD });
  t.equal(error, null);
  const session = data.session!;
  const claims = claimsOf(session.access_token);
  t.equal(claims.aal, 'aal1');
  const cap = Math.floor((await createdAt(lowAal, session)) + WINDOW);
  t.equal(claims.exp, cap, 'exp is the session creation + SESSIONS_ALLOW_LOW_AAL, not iat + JWT_EXP');
  t.equal(session.expires_at, cap, 'expires_at is the capped exp');
  t.equal(session.expires_in, cap - claims.iat, 'expires_in is what is left of it');
  t.ok(session.expires_in <= WINDOW && session.expires_in > WINDOW - 30);

  // A refresh inside the window answers a token capped at the same instant.
  await age(lowAal, session, '9 minutes');
  const renewed = await client.refreshSession();
  t.equal(renewed.error, null, 'inside the window the session refreshes');
  const renewedClaims = claimsOf(renewed.data.session!.access_token);
  t.equal(renewedClaims.exp, cap - 9 * 60, 'the refreshed token expires at the (moved) creation + the window');
  t.equal(renewed.data.session!.expires_in, renewedClaims.exp - renewedClaims.iat);
  t.equal((await getUser(lowAal, renewed.data.session!)).status, 200);
});

t.test('past the window the refresh grant refuses the aal1 session with the Low AAL message', async (t) => {
  const { email } = await mfaUser(lowAal);
  const client = authClient(lowAal.url);
  const { data } = await client.signInWithPassword({ email, password: PASSWORD });
  const session = data.session!;
  await age(lowAal, session, '10 minutes 1 second');

  const raw = await refresh(lowAal, session.refresh_token);
  t.equal(raw.status, 400);
  t.strictSame(raw.body, LOW_AAL);

  const { error } = await client.refreshSession();
  t.equal(error?.status, 400);
  t.equal(error?.message, LOW_AAL.msg, 'the client gets the exact message');
  t.equal((error as { code?: string }).code, 'session_expired');

  // Its access token is refused at once on user endpoints and on admin ones (docs/tokens-and-sessions.md#session-limits).
  const user = await getUser(lowAal, session);
  t.equal(user.status, 403);
  t.strictSame(user.body, BEARER_ENDED);
  const admin = await adminToken('service_role', { sub: session.user.id, session_id: sessionOf(session) });
  t.strictSame((await lowAal.request('GET', '/admin/users', { token: admin })).body, BEARER_ENDED);
  // Nothing is written: the session stays until the cleanup removes it.
  t.equal((await lowAal.db.query('select 1 from sessions where id = $1', [sessionOf(session)])).rowCount, 1);
});

t.test('an aal2 session is untouched, and an aal1 session verified inside the window lives on as aal2', async (t) => {
  const { email, factor, aal2 } = await mfaUser(lowAal);
  const claims = claimsOf(aal2.access_token);
  t.equal(claims.aal, 'aal2');
  t.equal(claims.exp, claims.iat + 3600, 'an aal2 token keeps iat + JWT_EXP');
  await age(lowAal, aal2, '2 hours');
  const renewed = await refresh(lowAal, aal2.refresh_token);
  t.equal(renewed.status, 200, 'an aal2 session older than the window refreshes');
  t.equal(claimsOf(renewed.body.access_token).exp, claimsOf(renewed.body.access_token).iat + 3600);
  t.equal((await getUser(lowAal, renewed.body)).status, 200);

  // aal1 first, then the factor is verified before the window ends: the session is aal2 from then on.
  const aal1 = await signIn(lowAal, email);
  t.ok(claimsOf(aal1.access_token).exp < claimsOf(aal1.access_token).iat + 3600, 'capped while aal1');
  await age(lowAal, aal1, '9 minutes');
  const c = await challenge(lowAal, aal1.access_token, factor.id);
  // A code of a later time step: the factor's last accepted step cannot be used twice.
  const upgraded = await verify(lowAal, aal1.access_token, factor.id, c.body.id, totpCode(factor.totp.secret, Date.now() + 30_000));
  t.equal(upgraded.status, 200, upgraded.text);
  const upgradedClaims = claimsOf(upgraded.body.access_token);
  t.equal(upgradedClaims.aal, 'aal2');
  t.equal(upgradedClaims.exp, upgradedClaims.iat + 3600, 'the aal2 token is not capped');
  await age(lowAal, upgraded.body, '1 hour');
  t.equal((await refresh(lowAal, upgraded.body.refresh_token)).status, 200, 'past the window the upgraded session refreshes');
});

t.test('users without a verified factor are not limited; any verified factor type counts', async (t) => {
  // No factor at all.
  const plain = await signUp(lowAal);
  t.equal(claimsOf(plain.access_token).exp, claimsOf(plain.access_token).iat + 3600);
  await age(lowAal, plain, '2 hours');
  t.equal((await refresh(lowAal, plain.refresh_token)).status, 200, 'no factor: an old aal1 session refreshes');
  t.equal((await getUser(lowAal, plain)).status, 200);

  // An enrolled factor that was never verified does not count.
  const enrolled = await signUp(lowAal);
  await enrollTotp(lowAal, enrolled.access_token);
  const again = await signIn(lowAal, enrolled.user.email);
  t.equal(claimsOf(again.access_token).exp, claimsOf(again.access_token).iat + 3600, 'an unverified factor: not capped');
  await age(lowAal, again, '2 hours');
  t.equal((await refresh(lowAal, again.refresh_token)).status, 200, 'an unverified factor: the session refreshes');

  // A verified phone factor counts as a TOTP one does (the user can reach aal2).
  const phone = await signUp(lowAal);
  await lowAal.db.query(`insert into mfa_factors (user_id, factor_type, status, phone) values ($1, 'phone', 'verified', '15550001111')`, [
    phone.user.id,
  ]);
  const phoneSession = await signIn(lowAal, phone.user.email);
  t.ok(claimsOf(phoneSession.access_token).exp <= claimsOf(phoneSession.access_token).iat + WINDOW, 'a phone factor: capped');
  await age(lowAal, phoneSession, '11 minutes');
  t.strictSame((await refresh(lowAal, phoneSession.refresh_token)).body, LOW_AAL);
});

t.test('unset: an aal1 session of a user with a verified factor is neither capped nor refused', async (t) => {
  const { email } = await mfaUser(unset);
  const client = authClient(unset.url);
  const { data } = await client.signInWithPassword({ email, password: PASSWORD });
  const claims = claimsOf(data.session!.access_token);
  t.equal(claims.aal, 'aal1');
  t.equal(claims.exp, claims.iat + 3600);
  t.equal(data.session!.expires_in, 3600);
  await age(unset, data.session!, '400 days');
  const renewed = await client.refreshSession();
  t.equal(renewed.error, null);
  t.equal(claimsOf(renewed.data.session!.access_token).exp, claimsOf(renewed.data.session!.access_token).iat + 3600);
  t.equal((await getUser(unset, renewed.data.session!)).status, 200);
});

t.test('with SESSIONS_SINGLE_PER_USER, a newer session the window has ended does not replace an older aal2 one', async (t) => {
  const single = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_SESSIONS_ALLOW_LOW_AAL: '10m',
    AUTH_SESSIONS_SINGLE_PER_USER: 'true',
  });
  t.teardown(() => single.stop());
  const { email, aal2 } = await mfaUser(single);
  await age(single, aal2, '30 minutes');
  const newer = await signIn(single, email); // aal1, newer
  t.equal((await refresh(single, aal2.refresh_token)).body.msg, 'Invalid Refresh Token: Session Expired (Revoked by Newer Login)');
  await age(single, newer, '11 minutes'); // still newer than the aal2 session, but past the window
  t.strictSame((await refresh(single, newer.refresh_token)).body, LOW_AAL);
  const renewed = await refresh(single, aal2.refresh_token);
  t.equal(renewed.status, 200, 'the aal2 session is the live one again');
});
