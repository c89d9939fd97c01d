// POST /otp by phone under SMS_AUTOCONFIRM and DISABLE_SIGNUP (REFERENCE §2.4).
import t from 'tap';
import { startMailStack } from './helpers/passwordless.js';

t.test('SMS_AUTOCONFIRM: a new number is signed up confirmed, then gets a code at once', async (t) => {
  const stack = await startMailStack({ AUTH_SMS_AUTOCONFIRM: 'true' }, { sms: true });
  t.teardown(() => stack.stop());
  const res = await stack.api.request('POST', '/otp', { body: { phone: '+15550202020' } });
  t.equal(res.status, 200);
  const message = await stack.sms!.waitForMessage('15550202020');
  t.strictSame(res.body, { message_id: message.id });
  const code = /(\d{6})/.exec(message.body)![1];
  const verified = await stack.api.request('POST', '/verify', { body: { type: 'sms', phone: '+15550202020', token: code } });
  t.equal(verified.status, 200);
  t.equal(verified.body.user.phone, '15550202020');
});

t.test('DISABLE_SIGNUP: a new number is refused, nothing is sent', async (t) => {
  const stack = await startMailStack({ AUTH_DISABLE_SIGNUP: 'true' }, { sms: true });
  t.teardown(() => stack.stop());
  const res = await stack.api.request('POST', '/otp', { body: { phone: '+15550303030' } });
  t.equal(res.status, 422);
  t.strictSame(res.body, { code: 422, error_code: 'signup_disabled', msg: 'Signups not allowed for this instance' });
  t.equal(stack.sms!.messages.length, 0);
});

t.test('SMS_MAX_FREQUENCY=0: one code per number per minute, as the original, not codes back to back', async (t) => {
  const stack = await startMailStack({ AUTH_SMS_MAX_FREQUENCY: '0' }, { sms: true });
  t.teardown(() => stack.stop());
  t.equal(stack.api.service.config.sms.maxFrequencySeconds, 60);
  const first = await stack.api.request('POST', '/otp', { body: { phone: '+15550404040' } });
  t.equal(first.status, 200);
  await stack.sms!.waitForMessage('15550404040');
  const second = await stack.api.request('POST', '/otp', { body: { phone: '+15550404040' } });
  t.equal(second.status, 429);
  t.equal(second.body.error_code, 'over_sms_send_rate_limit');
  t.equal(stack.sms!.messages.length, 1, 'no second code went out');
});
