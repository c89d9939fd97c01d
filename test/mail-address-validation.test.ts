// MAILER_EMAIL_VALIDATION_* (docs/one-time-codes-and-mail.md#address-validation): with the original's
// settings, a recipient is checked before its mail — static rules, then the domain's DNS records from a
// real name server the test runs, and an outside validation service speaking the original's wire format.
// A refused address is 400 email_address_invalid and leaves nothing behind; anything the checks cannot
// decide (a silent name server, a failing service) lets the mail through.
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMailStack, type MailStack } from './helpers/passwordless.js';
import { startDnsServer } from './helpers/dns-server.js';
import { startHookServer } from './helpers/hook-server.js';
import { loadConfig } from '../dist/server/config/load.js';

const PASSWORD = 'Secret-password-1';

const dns = await startDnsServer({
  'mail-ok.org': { mx: ['mx1.mail-ok.org', 'mx2.mail-ok.org'] },
  'host-only.org': { a: ['192.0.2.10'] },
  'v6-only.org': { aaaa: ['2001:db8::10'] },
  'disposable.org': { mx: ['MX.Throwaway.NET'] },
  'disposable-host.org': { a: ['192.0.2.66'] },
  'silent.org': { silent: true },
});
t.teardown(() => dns.close());

const asked = (domain: string) => dns.questions.filter((q) => q.startsWith(`${domain} `));

/** A service with the extended check asking the test's name server, stopped when `t` ends. */
async function extendedStack(t: Test, env: Record<string, string> = {}): Promise<MailStack> {
  const stack = await startMailStack({
    AUTH_MAILER_EMAIL_VALIDATION_EXTENDED: 'true',
    AUTH_MAILER_EMAIL_VALIDATION_NAMESERVERS: dns.address,
    ...env,
  });
  t.teardown(() => stack.stop());
  return stack;
}

async function usersNamed(stack: MailStack, email: string): Promise<number> {
  const { rows } = await stack.api.db.query('select count(*)::int as n from users where email = $1', [email]);
  return rows[0].n;
}

/** Signs up `email` and says what happened: the status, the error, whether a user and a mail exist. */
async function signUp(stack: MailStack, email: string) {
  const before = stack.smtp.mails.length;
  const res = await stack.api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  if (res.status === 200) await stack.smtp.waitForMail(email);
  return {
    status: res.status,
    error: res.status === 200 ? null : { code: res.body.error_code, msg: res.body.msg },
    users: await usersNamed(stack, email),
    mails: stack.smtp.mails.slice(before).filter((m) => m.to === email).length,
  };
}

const refused = (email: string) => ({
  status: 400,
  error: { code: 'email_address_invalid', msg: `Email address "${email}" is invalid` },
  users: 0,
  mails: 0,
});
const accepted = { status: 200, error: null, users: 1, mails: 1 };

t.test('extended: the static rules refuse placeholders and reserved names without a DNS query', async (t) => {
  const stack = await extendedStack(t);
  const questionsBefore = dns.questions.length;
  for (const email of [
    'test@gmail.com',
    'short@gmail.com',
    'someone@example.com',
    'someone@test.com',
    'someone@gamil.com',
    'someone@mail.test',
    'someone@printer.local',
    'someone@localhost',
    'someone@intranet',
    // the name is no RFC 5322 dot-atom, though the address pattern every request checks lets it through
    'some..one@gmail.com',
    '.someone@mail-ok.org',
    'someone.@mail-ok.org',
  ]) {
    t.strictSame(await signUp(stack, email), refused(email), email);
  }
  t.equal(dns.questions.length, questionsBefore, 'no name server was asked about any of them');

  t.strictSame(await signUp(stack, 'long.enough@gmail.com'), accepted, 'a Gmail name of 6 or more characters');
  t.strictSame(asked('gmail.com'), [], 'a large public provider is never looked up');
});

t.test('extended: a domain takes mail with MX records, or an address, unless the MX is blocked', async (t) => {
  const stack = await extendedStack(t, {
    // written as the original's users write them: with the root dot, in any case, and an address
    AUTH_MAILER_EMAIL_VALIDATION_BLOCKED_MX: '["mx.throwaway.net.", "192.0.2.66"]',
  });

  t.strictSame(await signUp(stack, 'user@mail-ok.org'), accepted, 'MX records');
  t.strictSame(asked('mail-ok.org'), ['mail-ok.org MX'], 'found by its MX records alone');
  t.strictSame(await signUp(stack, 'user@host-only.org'), accepted, 'no MX, an A record: the host is its own mail server');
  t.strictSame(await signUp(stack, 'user@v6-only.org'), accepted, 'no MX, an AAAA record');
  t.strictSame(await signUp(stack, 'user@nowhere.org'), refused('user@nowhere.org'), 'no such domain');
  t.strictSame(asked('nowhere.org').sort(), ['nowhere.org A', 'nowhere.org AAAA', 'nowhere.org MX']);
  t.strictSame(await signUp(stack, 'user@disposable.org'), refused('user@disposable.org'), 'a blocked MX host');
  t.strictSame(await signUp(stack, 'user@disposable-host.org'), refused('user@disposable-host.org'), 'a blocked address, without MX');

  // The other mails are checked as well: a magic link to a new address would sign that address up.
  const otp = await stack.api.request('POST', '/otp', { body: { email: 'other@nowhere.org' } });
  t.equal(otp.status, 400);
  t.equal(otp.body.error_code, 'email_address_invalid');
  t.equal(await usersNamed(stack, 'other@nowhere.org'), 0, 'the passwordless sign-up was rolled back');

  // A name server that does not answer decides nothing: the mail goes.
  t.strictSame(await signUp(stack, 'user@silent.org'), accepted, 'a silent name server lets the address through');
});

t.test('no transaction waits on a name server: the address is checked before the request writes', async (t) => {
  const stack = await extendedStack(t);
  // silent.org's name server never answers: the check waits its whole 3 s for it.
  const askedBefore = asked('silent.org').length;
  const signingUp = stack.api.request('POST', '/signup', { body: { email: 'waiting@silent.org', password: PASSWORD } });
  while (asked('silent.org').length === askedBefore) await new Promise((resolve) => setTimeout(resolve, 20));
  const { rows } = await stack.api.db.query(
    `select state from pg_stat_activity
     where datname = current_database() and application_name = 'portcullis' and state like 'idle in transaction%'`,
  );
  t.strictSame(rows, [], 'no connection of the service sits in a transaction while the name server is asked');
  t.equal((await signingUp).status, 200, 'undecided, so the mail goes');
  await stack.smtp.waitForMail('waiting@silent.org');
});

t.test('a secure email change checks both addresses before either mail goes', async (t) => {
  const stack = await extendedStack(t, { AUTH_SMTP_MAX_FREQUENCY: '1s' });
  const email = 'changing@mail-ok.org';
  t.strictSame(await signUp(stack, email), accepted);
  await stack.api.db.query('update users set email_confirmed_at = now() where email = $1', [email]);
  const session = await stack.api.request('POST', '/token?grant_type=password', { body: { email, password: PASSWORD } });
  const change = (to: string) => stack.api.request('PUT', '/user', { token: session.body.access_token, body: { email: to } });
  const mailsTo = (address: string) => stack.smtp.mails.filter((m) => m.to === address).length;

  const refusedChange = await change('new@nowhere.org');
  t.equal(refusedChange.body.error_code, 'email_address_invalid');
  t.equal(mailsTo(email), 1, 'the current address got no mail either: only its sign-up confirmation');
  const { rows } = await stack.api.db.query('select email_change from users where email = $1', [email]);
  t.strictSame(rows, [{ email_change: null }], 'no change is pending');

  await new Promise((resolve) => setTimeout(resolve, 1100));
  const accepted2 = await change('new@host-only.org');
  t.equal(accepted2.status, 200, accepted2.text);
  await stack.smtp.waitForMail('new@host-only.org');
  await stack.smtp.waitForMail((m) => m.to === email && /change/i.test(m.subject));
  t.equal(mailsTo('new@host-only.org'), 1, 'one mail to the new address, though the request started over to check it');
  t.equal(mailsTo(email), 2, 'and one to the current address');
});

t.test('the validation service: only a 2xx {"valid": false} refuses', async (t) => {
  const calls: Array<{ headers: http.IncomingHttpHeaders; body: unknown }> = [];
  const service = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = JSON.parse(text) as { email: string };
      calls.push({ headers: req.headers, body });
      const [local] = body.email.split('@');
      if (local === 'stall') return; // never answers: the check gives up after its 3 s
      const reply: Record<string, [number, string]> = {
        refused: [200, '{"valid": false}'],
        'refused-long': [200, JSON.stringify({ valid: false, reason: 'disposable address', score: 0.01 })],
        down: [503, '{"valid": false}'],
        garbled: [200, 'not json'],
        unsure: [200, '{"valid": "false"}'],
      };
      const [status, payload] = reply[local ?? ''] ?? [200, '{"valid": true}'];
      res.writeHead(status, { 'content-type': 'application/json' }).end(payload);
    });
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    service.closeAllConnections();
    service.close();
  });
  const stack = await startMailStack({
    AUTH_MAILER_EMAIL_VALIDATION_SERVICE_URL: `http://127.0.0.1:${(service.address() as AddressInfo).port}/validate`,
    AUTH_MAILER_EMAIL_VALIDATION_SERVICE_HEADERS: '{"Authorization": ["Bearer old", "Bearer current"], "X-Tenant": ["t1"]}',
    AUTH_MAILER_EMAIL_VALIDATION_NAMESERVERS: dns.address,
  });
  t.teardown(() => stack.stop());
  const questionsBefore = dns.questions.length;

  t.strictSame(await signUp(stack, 'fine@nowhere.org'), accepted, 'the service says valid; no DNS check is on');
  const [call] = calls;
  t.strictSame(call?.body, { email: 'fine@nowhere.org' });
  t.equal(call?.headers['content-type'], 'application/json');
  t.equal(call?.headers.authorization, 'Bearer current', 'the last value of a list, as the original sets them');
  t.equal(call?.headers['x-tenant'], 't1');

  t.strictSame(await signUp(stack, 'refused@mail-ok.org'), refused('refused@mail-ok.org'));
  t.strictSame(await signUp(stack, 'refused-long@mail-ok.org'), refused('refused-long@mail-ok.org'), 'whatever else it says');
  t.strictSame(await signUp(stack, 'down@mail-ok.org'), accepted, 'a service answering 503 refuses nothing');
  t.strictSame(await signUp(stack, 'garbled@mail-ok.org'), accepted, 'nor one answering something unreadable');
  t.strictSame(await signUp(stack, 'unsure@mail-ok.org'), accepted, 'nor a "valid" that is not false');
  t.strictSame(await signUp(stack, 'stall@mail-ok.org'), accepted, 'nor one that never answers');
  t.strictSame(await signUp(stack, 'test@example.com'), accepted, 'the static rules belong to the extended check only');
  t.equal(dns.questions.length, questionsBefore, 'no DNS look-up without the extended check');
});

t.test('off by default; with the send email hook on, the hook gets the mail unchecked, as in the original', async (t) => {
  const off = await startMailStack({ AUTH_MAILER_EMAIL_VALIDATION_NAMESERVERS: dns.address });
  t.teardown(() => off.stop());
  const questionsBefore = dns.questions.length;
  t.strictSame(await signUp(off, 'user@nowhere.org'), accepted);
  t.equal(dns.questions.length, questionsBefore);

  const hooks = await startHookServer();
  t.teardown(() => hooks.close());
  hooks.on('/send-email', () => ({ body: {} }));
  const hooked = await extendedStack(t, {
    AUTH_HOOK_SEND_EMAIL_ENABLED: 'true',
    AUTH_HOOK_SEND_EMAIL_URI: `${hooks.url}/send-email`,
    AUTH_HOOK_SEND_EMAIL_SECRETS: hooks.secret,
  });
  const res = await hooked.api.request('POST', '/signup', { body: { email: 'hooked@nowhere.org', password: PASSWORD } });
  t.equal(res.status, 200);
  t.equal(hooks.callsTo('/send-email').filter((c) => c.payload.user.email === 'hooked@nowhere.org').length, 1);
  t.equal(dns.questions.length, questionsBefore, 'nothing was looked up');
});

t.test('JSON settings the original cannot read are ignored with a warning, as it ignores them', async (t) => {
  const config = loadConfig({
    envFile: null,
    env: {
      GOTRUE_SITE_URL: 'http://localhost:3000',
      GOTRUE_MAILER_EMAIL_VALIDATION_EXTENDED: 'true',
      GOTRUE_MAILER_EMAIL_VALIDATION_SERVICE_HEADERS: '{"apikey": "not a list"}',
      GOTRUE_MAILER_EMAIL_VALIDATION_BLOCKED_MX: 'mx.throwaway.net',
    },
  });
  t.strictSame(
    config.warnings.filter((w) => w.includes('EMAIL_VALIDATION')),
    [
      'GOTRUE_MAILER_EMAIL_VALIDATION_SERVICE_HEADERS: not a JSON object of header name → list of values; ignored, as the original does',
      'GOTRUE_MAILER_EMAIL_VALIDATION_BLOCKED_MX: not a JSON array of host names; ignored, as the original does',
    ],
  );
  t.strictSame(config.mailer.emailValidation, {
    extended: true,
    serviceUrl: '',
    serviceHeaders: '',
    blockedMx: '',
    nameservers: [],
  });
});
