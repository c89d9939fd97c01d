// A bare SECRETS variable signs every hook whose own HOOK_<NAME>_SECRETS is unset, as the original's
// configuration loader reads it (docs/settings.md#hooks); a hook's own secrets still win. Two endpoints, each
// verifying with its own secret, tell which secrets signed each call.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { newHookSecret, startHookServer } from './helpers/hook-server.js';
import { uniqueEmail } from './helpers/accounts.js';
import { PASSWORD, adminCreatedUser } from './helpers/users.js';

const shared = await startHookServer();
const own = await startHookServer();
const api = await startTestService({
  // Two secrets separated by |, as the hooks' own setting takes them: the endpoint knows the second.
  SECRETS: `${newHookSecret()}|${shared.secret}`,
  AUTH_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED: 'true',
  AUTH_HOOK_CUSTOM_ACCESS_TOKEN_URI: `${shared.url}/custom-access-token`,
  GOTRUE_HOOK_PASSWORD_VERIFICATION_ATTEMPT_ENABLED: 'true',
  GOTRUE_HOOK_PASSWORD_VERIFICATION_ATTEMPT_URI: `${own.url}/password-verification-attempt`,
  GOTRUE_HOOK_PASSWORD_VERIFICATION_ATTEMPT_SECRETS: own.secret,
});
t.teardown(async () => {
  await api.stop();
  await shared.close();
  await own.close();
});

shared.on('/custom-access-token', (p) => ({ body: { claims: { ...p.claims, signed_by: 'shared' } } }));
own.on('/password-verification-attempt', () => ({ body: { decision: 'continue' } }));

t.test('a hook without secrets of its own is signed with the bare SECRETS; one with its own, with those alone', async (t) => {
  const user = await adminCreatedUser(api, uniqueEmail('bare-secrets'));
  const res = await api.request('POST', '/token?grant_type=password', { body: { email: user.email, password: PASSWORD } });
  t.equal(res.status, 200);
  const custom = shared.callsTo('/custom-access-token').at(-1)!;
  t.ok(custom.verified, 'the custom access token call verifies with the secret from SECRETS');
  t.equal(String(custom.headers['webhook-signature']).split(', ').length, 2, 'one signature per secret in SECRETS');
  const attempt = own.callsTo('/password-verification-attempt').at(-1)!;
  t.ok(attempt.verified, "the password verification call verifies with the hook's own secret");
  t.equal(String(attempt.headers['webhook-signature']).split(', ').length, 1, 'SECRETS adds nothing to a hook that has its own');
});
