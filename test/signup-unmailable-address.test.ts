// POST /signup and POST /resend for an address no mail may go to (EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES leaves
// it out, or MAILER_EMAIL_VALIDATION_EXTENDED refuses it): a new or pending address's confirmation is refused
// with a 400, so the confirmation pretended for a confirmed (or, for /resend, unknown) address must be
// refused the same way, or its 200 told which addresses have accounts
// (docs/architecture.md#same-work-and-same-answer-for-unknown-accounts).
import t, { type Test } from 'tap';
import { insertUser, startMailStack, type MailStack } from './helpers/passwordless.js';
import { PASSWORD } from './helpers/users.js';

async function stackWith(t: Test, env: Record<string, string>): Promise<MailStack> {
  const stack = await startMailStack({ AUTH_SMTP_MAX_FREQUENCY: '1ms', AUTH_RATE_LIMIT_EMAIL_SENT: '100000', ...env });
  t.teardown(() => stack.stop());
  return stack;
}

/** The answers for a confirmed, a pending and an unknown address on `domain`, and the mails that went out. */
async function answersOn(stack: MailStack, domain: string) {
  const confirmed = `confirmed@${domain}`;
  const pending = `pending@${domain}`;
  await insertUser(stack.api.db, { email: confirmed, confirmed: true });
  await insertUser(stack.api.db, { email: pending });
  const answer = async (path: string, body: Record<string, unknown>) => {
    const res = await stack.api.request('POST', path, { body });
    return { status: res.status, code: res.body.error_code ?? null };
  };
  const signup = (email: string) => answer('/signup', { email, password: PASSWORD });
  const resend = (email: string) => answer('/resend', { type: 'signup', email });
  return {
    signup: { confirmed: await signup(confirmed), pending: await signup(pending), unknown: await signup(`new@${domain}`) },
    resend: { confirmed: await resend(confirmed), pending: await resend(pending), unknown: await resend(`nobody@${domain}`) },
    mails: stack.smtp.mails.length,
  };
}

const all = (refused: { status: number; code: string }) => ({
  signup: { confirmed: refused, pending: refused, unknown: refused },
  resend: { confirmed: refused, pending: refused, unknown: refused },
  mails: 0,
});

t.test('an address left out of EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES answers the same 400, account or not', async (t) => {
  const stack = await stackWith(t, { AUTH_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES: 'team@example.com' });
  t.strictSame(await answersOn(stack, 'example.net'), all({ status: 400, code: 'email_address_not_authorized' }));
  const users = await stack.api.db.query("select email from users where email like '%@example.net' order by email");
  t.strictSame(
    users.rows.map((r) => r.email),
    ['confirmed@example.net', 'pending@example.net'],
    'no user signed up',
  );
});

t.test('an address MAILER_EMAIL_VALIDATION_EXTENDED refuses answers the same 400, account or not', async (t) => {
  // example.com is refused by the static rules, before any DNS query.
  const stack = await stackWith(t, { AUTH_MAILER_EMAIL_VALIDATION_EXTENDED: 'true' });
  t.strictSame(await answersOn(stack, 'example.com'), all({ status: 400, code: 'email_address_invalid' }));
});
