// Answers the official client expects (issue 18 item 9), asserted over HTTP and, where the client has a
// call for it, through @supabase/auth-js itself.
import t from 'tap';
import { startMailStack } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { authClient } from './helpers/auth-client.js';

const stack = await startMailStack({ AUTH_EXTERNAL_PHONE_ENABLED: 'true', AUTH_SMS_TEST_OTP: '15555550100:123456' });
const { api, smtp } = stack;
t.teardown(() => stack.stop());
const admin = await adminToken();

t.test('POST /verify with a malformed phone is 400 validation_failed, not otp_expired', async (t) => {
  const res = await api.request('POST', '/verify', { body: { type: 'sms', phone: '15555550100-invalid', token: '123456' } });
  t.strictSame(
    [res.status, res.body],
    [400, { code: 400, error_code: 'validation_failed', msg: 'Invalid phone number format (E.164 required)' }],
  );
  const client = authClient(api.url);
  const { error } = await client.verifyOtp({ type: 'sms', phone: '12345678-invalid', token: '123456' });
  t.match(error, { status: 400, code: 'validation_failed', message: 'Invalid phone number format (E.164 required)' });
});

t.test('generate_link signup leaves user_metadata exactly the data sent', async (t) => {
  const email = uniqueEmail('link');
  const res = await api.request('POST', '/admin/generate_link', {
    token: admin,
    body: { type: 'signup', email, password: 'Passw0rd-123', data: { status: 'alpha' } },
  });
  t.equal(res.status, 200);
  t.strictSame(res.body.user_metadata, { status: 'alpha' });
  const row = await api.db.query('select raw_user_meta_data from users where email = $1', [email]);
  t.strictSame(row.rows[0].raw_user_meta_data, { status: 'alpha' });
});

t.test('a repeated sign-up of a confirmed address answers a user with identities: []', async (t) => {
  const email = uniqueEmail('again');
  const client = authClient(api.url);
  const first = await client.signUp({ email, password: 'Passw0rd-123' });
  t.equal(first.data.user?.identities?.length, 1);
  await smtp.waitForMail(email);
  await api.db.query('update users set email_confirmed_at = now() where email = $1', [email]);
  const again = await client.signUp({ email, password: 'Passw0rd-123' });
  t.equal(again.error, null);
  t.strictSame(again.data.user?.identities, [], 'the signal auth-js documents for an existing address');
  t.not(again.data.user?.id, first.data.user?.id);
});

t.test('POST /sso is 404 saml_provider_disabled', async (t) => {
  const res = await api.request('POST', '/sso', { body: { domain: 'example.com' } });
  t.strictSame([res.status, res.body], [404, { code: 404, error_code: 'saml_provider_disabled', msg: 'SAML 2.0 is disabled' }]);
  const { error } = await authClient(api.url).signInWithSSO({ domain: 'example.com' });
  t.match(error, { status: 404, code: 'saml_provider_disabled', message: 'SAML 2.0 is disabled' });
});

t.test('grant_type=web3 is 422 web3_provider_disabled while both chains are off (the default; docs/web3.md)', async (t) => {
  const res = await api.request('POST', '/token?grant_type=web3', { body: { chain: 'ethereum', message: 'm', signature: '0x00' } });
  t.strictSame([res.status, res.body], [422, { code: 422, error_code: 'web3_provider_disabled', msg: 'Web3 provider is disabled' }]);
});
