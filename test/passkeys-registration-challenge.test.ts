// When a passkey registration's challenge is spent (docs/passkeys.md#challenges): with the passkey's insert,
// so a verify refused after its attestation passed leaves it for the same answer again; at once when the
// attestation is refused; and never twice, however many answers race with it.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { PASSKEY_ENV, newAuthenticator, register } from './helpers/passkeys.js';

const api = await startTestService({ ...PASSKEY_ENV, AUTH_PASSKEY_MAX_PASSKEYS_PER_USER: '2' });
t.teardown(() => api.stop());
const CHALLENGE_GONE = { code: 400, error_code: 'webauthn_challenge_not_found', msg: 'Challenge not found or already used' };
const passkeysOf = async (userId: string) =>
  (await api.db.query('select count(*)::int as n from webauthn_credentials where user_id = $1', [userId])).rows[0].n as number;

t.test('a registration refused after its attestation passed keeps its challenge: the same answer may be sent again', async (t) => {
  const { access_token: token, user } = await signUp(api);
  t.equal((await register(api, token, newAuthenticator())).status, 200);
  const started = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  const verify = { token, body: { challenge_id: started.body.challenge_id, credential: newAuthenticator().create(started.body.options) } };
  // The user's second passkey, registered between the options and their answer, reaches the limit of 2.
  const { body: second } = await register(api, token, newAuthenticator());
  const refused = await api.request('POST', '/passkeys/registration/verify', verify);
  t.same(refused.body, { code: 422, error_code: 'too_many_passkeys', msg: 'Maximum number of passkeys reached' });
  const kept = await api.db.query('select 1 from webauthn_challenges where id = $1', [started.body.challenge_id]);
  t.equal(kept.rowCount, 1, 'the challenge is not spent');
  t.equal((await api.request('DELETE', `/passkeys/${second.id}`, { token })).status, 204);
  const retried = await api.request('POST', '/passkeys/registration/verify', verify);
  t.equal(retried.status, 200, retried.text);
  t.same((await api.request('POST', '/passkeys/registration/verify', verify)).body, CHALLENGE_GONE, 'spent by the success');
  t.equal(await passkeysOf(user.id), 2);
});

t.test('a refused attestation spends its challenge; of concurrent answers to one challenge one registers', async (t) => {
  const { access_token: token, user } = await signUp(api);
  const started = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  const challenge_id = started.body.challenge_id;
  const wrongOrigin = newAuthenticator().create(started.body.options, { origin: 'https://evil.example.com' });
  const refused = await api.request('POST', '/passkeys/registration/verify', { token, body: { challenge_id, credential: wrongOrigin } });
  t.same(refused.body, { code: 400, error_code: 'webauthn_verification_failed', msg: 'Credential verification failed' });
  const late = await api.request('POST', '/passkeys/registration/verify', {
    token,
    body: { challenge_id, credential: newAuthenticator().create(started.body.options) },
  });
  t.same(late.body, CHALLENGE_GONE, 'one attempt per challenge, as in the original');

  const again = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  const answers = await Promise.all(
    [newAuthenticator(), newAuthenticator()].map((a) =>
      api.request('POST', '/passkeys/registration/verify', {
        token,
        body: { challenge_id: again.body.challenge_id, credential: a.create(again.body.options) },
      }),
    ),
  );
  t.same(answers.map((a) => a.status).sort(), [200, 400], answers.map((a) => a.text).join(' '));
  t.same(answers.find((a) => a.status === 400)?.body, CHALLENGE_GONE);
  t.equal(await passkeysOf(user.id), 1);
});
