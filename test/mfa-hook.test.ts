// The MFA verification attempt hook wired into POST /factors/{id}/verify (docs/hooks.md#mfa-verification-attempt):
// it sees every attempt with whether the code was right, "continue" lets the verdict stand, and "reject"
// ends every session of the user with 403 mfa_verification_rejected and the hook's message. And the custom
// access token hook at the same verification (docs/mfa.md#what-verifying-does).
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { refresh, signIn, signUp, uniqueEmail } from './helpers/accounts.js';
import { challenge, claimsOf, enrollTotp, totpCode, verify } from './helpers/mfa.js';

const api = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_HOOK_MFA_VERIFICATION_ATTEMPT_ENABLED: 'true',
  AUTH_HOOK_MFA_VERIFICATION_ATTEMPT_URI: 'pg-functions://postgres/mfa_hook_test/attempt',
  AUTH_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED: 'true',
  AUTH_HOOK_CUSTOM_ACCESS_TOKEN_URI: 'pg-functions://postgres/mfa_hook_test/custom_access_token',
});
t.teardown(() => api.stop());

// Rejects a wrong code for addresses starting with "strict-"; records every event it is shown.
await api.db.query(`
  create schema mfa_hook_test;
  create table mfa_hook_test.events (id bigserial primary key, event jsonb not null);
  create function mfa_hook_test.attempt(event jsonb) returns jsonb language plpgsql as $$
  begin
    insert into mfa_hook_test.events (event) values (event);
    if not (event->>'valid')::boolean and exists (select 1 from users where id = (event->>'user_id')::uuid and email like 'strict-%') then
      return jsonb_build_object('decision', 'reject', 'message', 'Too many wrong codes');
    end if;
    return jsonb_build_object('decision', 'continue');
  end $$;

  -- Hands every token out unchanged, but refuses the aal2 one of a user with a row here.
  create table mfa_hook_test.refusing (user_id uuid primary key);
  create function mfa_hook_test.custom_access_token(event jsonb) returns jsonb language plpgsql as $$
  begin
    if event->>'authentication_method' = 'totp'
      and exists (select 1 from mfa_hook_test.refusing where user_id = (event->>'user_id')::uuid) then
      return jsonb_build_object('error', jsonb_build_object('http_code', 403, 'message', 'No aal2 for you'));
    end if;
    return jsonb_build_object('claims', event->'claims');
  end $$;
`);
const events = async (userId: string) =>
  (await api.db.query(`select event from mfa_hook_test.events where event->>'user_id' = $1 order by id`, [userId])).rows.map(
    (r) => r.event,
  );

t.test('the hook is shown a right code and the verification goes on to aal2', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token);
  const c = await challenge(api, s.access_token, factor.id);
  const v = await verify(api, s.access_token, factor.id, c.body.id, totpCode(factor.totp.secret));
  t.equal(v.status, 200);
  t.equal(claimsOf(v.body.access_token).aal, 'aal2');
  t.match(await events(s.user.id), [{ user_id: s.user.id, factor_id: factor.id, factor_type: 'totp', valid: true }]);
});

t.test('a wrong code the hook lets continue is the usual 422', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token);
  const c = await challenge(api, s.access_token, factor.id);
  const v = await verify(api, s.access_token, factor.id, c.body.id, '000000');
  t.same([v.status, v.body.error_code], [422, 'mfa_verification_failed']);
  t.match(await events(s.user.id), [{ factor_id: factor.id, valid: false }]);
  t.equal((await api.request('GET', '/user', { token: s.access_token })).status, 200, 'the session lives on');
});

t.test('a wrong code the hook rejects ends every session of the user', async (t) => {
  const email = `strict-${uniqueEmail()}`;
  const s = await signUp(api, email);
  const other = await signIn(api, email);
  const factor = await enrollTotp(api, s.access_token);
  const c = await challenge(api, s.access_token, factor.id);
  const v = await verify(api, s.access_token, factor.id, c.body.id, '000000');
  t.same(v.status, 403);
  t.same(v.body, { code: 403, error_code: 'mfa_verification_rejected', msg: 'Too many wrong codes' });
  const { rows } = await api.db.query('select count(*)::int as n from sessions where user_id = $1', [s.user.id]);
  t.equal(rows[0].n, 0, 'both sessions ended');
  t.equal((await api.request('GET', '/user', { token: other.access_token })).status, 403);
});

// The custom access token hook runs in the verification's transaction, as in the original: its refusal
// of the aal2 token undoes the whole upgrade.
t.test('a refused aal2 token leaves the factor, the session and the refresh token as they were; a retry works', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token);
  const userId = s.user.id;
  await api.db.query('insert into mfa_hook_test.refusing (user_id) values ($1)', [userId]);
  const c = await challenge(api, s.access_token, factor.id);
  t.equal(c.status, 200);
  const code = totpCode(factor.totp.secret);

  const refused = await verify(api, s.access_token, factor.id, c.body.id, code);
  t.strictSame([refused.status, refused.body.msg], [403, 'No aal2 for you'], "the hook's refusal");
  const factorRow = await api.db.query('select status from mfa_factors where id = $1', [factor.id]);
  t.equal(factorRow.rows[0].status, 'unverified', 'the factor is not verified');
  const sessionRow = await api.db.query('select aal, factor_id from sessions where user_id = $1', [userId]);
  t.strictSame(sessionRow.rows, [{ aal: 'aal1', factor_id: null }], 'the session is not raised');
  const challengeRow = await api.db.query('select verified_at from mfa_challenges where id = $1', [c.body.id]);
  t.equal(challengeRow.rows[0].verified_at, null, 'the challenge is not spent');
  const refreshed = await refresh(api, s.refresh_token);
  t.equal(refreshed.status, 200, 'the aal1 refresh token still works: it was not swapped');

  await api.db.query('delete from mfa_hook_test.refusing where user_id = $1', [userId]);
  const retried = await verify(api, refreshed.body.access_token, factor.id, c.body.id, code);
  t.equal(retried.status, 200, 'the same challenge and code, once the hook allows it');
  t.equal(claimsOf(retried.body.access_token).aal, 'aal2');
});
