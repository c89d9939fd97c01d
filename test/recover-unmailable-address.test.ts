// POST /recover for an address no mail may go to (EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES leaves it out, or
// MAILER_EMAIL_VALIDATION_EXTENDED refuses it): a known address's mail is refused with a 400, so an unknown
// one must be refused the same way, or the 200 it got told which addresses have accounts
// (docs/architecture.md#same-work-and-same-answer-for-unknown-accounts).
import t, { type Test } from 'tap';
import { insertUser, startMailStack, type MailStack } from './helpers/passwordless.js';

async function stackWith(t: Test, env: Record<string, string>): Promise<MailStack> {
  const stack = await startMailStack({ AUTH_SMTP_MAX_FREQUENCY: '1ms', ...env });
  t.teardown(() => stack.stop());
  return stack;
}

/** The answers to /recover for a known and an unknown address, and the mails that went out. */
async function recoverBoth(stack: MailStack, known: string, unknown: string) {
  await insertUser(stack.api.db, { email: known, confirmed: true });
  const answer = async (email: string) => {
    const res = await stack.api.request('POST', '/recover', { body: { email } });
    return { status: res.status, code: res.body.error_code ?? null };
  };
  return { known: await answer(known), unknown: await answer(unknown), mails: stack.smtp.mails.length };
}

t.test('an address left out of EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES answers the same 400, account or not', async (t) => {
  const stack = await stackWith(t, { AUTH_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES: 'team@example.com' });
  const seen = await recoverBoth(stack, 'outsider@example.net', 'nobody@example.net');
  const refused = { status: 400, code: 'email_address_not_authorized' };
  t.strictSame(seen, { known: refused, unknown: refused, mails: 0 });
});

t.test('an address MAILER_EMAIL_VALIDATION_EXTENDED refuses answers the same 400, account or not', async (t) => {
  // example.com is refused by the static rules, before any DNS query.
  const stack = await stackWith(t, { AUTH_MAILER_EMAIL_VALIDATION_EXTENDED: 'true' });
  const seen = await recoverBoth(stack, 'someone@example.com', 'no-one@example.com');
  const refused = { status: 400, code: 'email_address_invalid' };
  t.strictSame(seen, { known: refused, unknown: refused, mails: 0 });
  // A listed-and-valid address is untouched: the unknown one still answers 200 {}.
  const ok = await stack.api.request('POST', '/recover', { body: { email: 'no-one@gmail.com' } });
  t.strictSame([ok.status, ok.body], [200, {}]);
});
