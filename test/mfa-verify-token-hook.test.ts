// POST /factors/{id}/verify with the custom access token hook on (docs/mfa.md#post-factorsfactor_idverify):
// the hook runs in the verification's transaction, as in the original, so a hook that refuses the aal2
// token undoes the whole upgrade. The hook is a real Postgres function that refuses while a flag row exists.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { refresh, signUp } from './helpers/accounts.js';
import { challenge, claimsOf, enrollTotp, totpCode, verify } from './helpers/mfa.js';

const api = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED: 'true',
  AUTH_HOOK_CUSTOM_ACCESS_TOKEN_URI: 'pg-functions://postgres/mfa_hook_test/custom_access_token',
});
t.teardown(() => api.stop());
await api.db.query(`
  create schema mfa_hook_test;
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
