// The MFA verification attempt hook wired into POST /factors/{id}/verify (docs/hooks.md#mfa-verification-attempt):
// it sees every attempt with whether the code was right, "continue" lets the verdict stand, and "reject"
// ends every session of the user with 403 mfa_verification_rejected and the hook's message.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { signIn, signUp, uniqueEmail } from './helpers/accounts.js';
import { challenge, claimsOf, enrollTotp, totpCode, verify } from './helpers/mfa.js';

const api = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_HOOK_MFA_VERIFICATION_ATTEMPT_ENABLED: 'true',
  AUTH_HOOK_MFA_VERIFICATION_ATTEMPT_URI: 'pg-functions://postgres/mfa_hook_test/attempt',
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
