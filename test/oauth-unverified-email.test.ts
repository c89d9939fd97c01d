// An OAuth sign-in whose provider did not verify the address (REFERENCE §9.4 item 5): the account is kept,
// the confirmation mail goes out through the ordinary confirmation path to a real SMTP server, and the
// redirect carries 422 provider_email_needs_verification — unless MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS,
// which signs the person in unconfirmed (the mail still sent). EXTERNAL_REDIRECT_URL (REFERENCE §9.5) wins
// over the flow's redirect_to and over SITE_URL, for sessions and the flow's errors (a bad state's go to
// SITE_URL). GitHub is played by a
// local server speaking its wire format.
import t from 'tap';
import { loadConfig } from '../dist/server/config/load.js';
import { startTestService, type TestService } from './helpers/server.js';
import { startGithubFake, type GithubUser } from './helpers/github.js';
import { startSmtpServer } from './helpers/smtp.js';
import { authorizeUrl, callback, fragmentOf, queryOf, githubEnv } from './helpers/oauth.js';

const gh = await startGithubFake();
const smtp = await startSmtpServer();
const common = {
  ...githubEnv(gh),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com',
};
const api = await startTestService(common);
const lenient = await startTestService({
  ...common,
  AUTH_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: 'true',
  AUTH_EXTERNAL_REDIRECT_URL: 'https://fixed.example.test/after-oauth',
});
t.teardown(async () => {
  await api.stop();
  await lenient.stop();
  await smtp.close();
  await gh.stop();
});

let nextId = 5000;
function githubUser(email: string, verified: boolean): GithubUser {
  const user: GithubUser = {
    id: ++nextId,
    login: `user${nextId}`,
    name: `User ${nextId}`,
    avatar_url: `https://avatars.example.test/${nextId}`,
    emails: [{ email, primary: true, verified, visibility: 'public' }],
  };
  gh.users.set(user.id, user);
  return user;
}

async function signIn(service: TestService, user: GithubUser, redirectTo = 'https://app.example.test/done') {
  gh.approveAs = user.id;
  const url = await authorizeUrl(service, `provider=github&redirect_to=${encodeURIComponent(redirectTo)}`);
  return callback(service, await gh.approve(url.href));
}

const userRow = async (service: TestService, email: string) =>
  (await service.db.query('select id, email_confirmed_at, confirmation_sent_at from users where email = $1', [email])).rows[0];

t.test('unverified address: the account is kept, the confirmation mail sent, 422 in the redirect; the mail link confirms it', async (t) => {
  const person = githubUser('unverified-new@example.com', false);
  const { status, location } = await signIn(api, person);
  t.equal(status, 302);
  t.equal(location.origin + location.pathname, 'https://app.example.test/done');
  t.same(queryOf(location), {
    error: 'access_denied',
    error_code: 'provider_email_needs_verification',
    error_description: 'Unverified email with github. A confirmation email has been sent to your github email',
  });
  t.equal(fragmentOf(location).access_token, undefined, 'no session');

  const row = await userRow(api, 'unverified-new@example.com');
  t.ok(row, 'the user is committed with the error');
  t.equal(row.email_confirmed_at, null);
  t.ok(row.confirmation_sent_at);
  const identity = await api.db.query(`select identity_data from identities where user_id = $1 and provider = 'github'`, [row.id]);
  t.match(identity.rows[0].identity_data, { email: 'unverified-new@example.com', email_verified: false });
  t.same(
    (await api.db.query('select callback_at from flow_state')).rows,
    [{ callback_at: null }],
    'the flow is kept unspent, as the original keeps it after a refusal',
  );

  const mail = await smtp.waitForMail('unverified-new@example.com');
  t.equal(mail.subject, 'Confirm Your Signup');
  const link = new URL(mail.link!);
  t.equal(link.searchParams.get('type'), 'signup');
  t.equal(
    link.searchParams.get('redirect_to'),
    'http://localhost:3000',
    "the callback request's own target (it names none: SITE_URL), as the original's mail takes it, not the flow's",
  );

  const again = await signIn(api, person);
  t.equal(
    again.location.searchParams.get('error_code'),
    'over_email_send_rate_limit',
    'a second try inside SMTP_MAX_FREQUENCY mails nothing',
  );
  t.equal(smtp.mails.filter((m) => m.to === 'unverified-new@example.com').length, 1);

  const verified = await api.request('GET', link.pathname + link.search);
  t.equal(verified.status, 303);
  t.ok((await userRow(api, 'unverified-new@example.com')).email_confirmed_at, 'the link confirmed the address');
  const after = await signIn(api, person);
  const me = await api.request('GET', '/user', { token: fragmentOf(after.location).access_token });
  t.equal(me.body.id, row.id, 'once confirmed, the same identity signs in');
});

t.test('verified addresses none of which is primary: an account without an address, kept, and 422 with no mail', async (t) => {
  const person = githubUser('first-listed@example.com', true);
  person.emails = [
    { email: 'first-listed@example.com', primary: false, verified: true, visibility: null },
    { email: 'last-listed@example.com', primary: false, verified: true, visibility: null },
  ];
  const mailsBefore = smtp.mails.length;
  const { location } = await signIn(api, person);
  t.same(queryOf(location), {
    error: 'access_denied',
    error_code: 'provider_email_needs_verification',
    error_description: 'Unverified email with github. Verify the email with github in order to sign in',
  });
  t.equal(fragmentOf(location).access_token, undefined, 'no session');
  const identity = await api.db.query(
    `select i.identity_data, u.email, u.email_confirmed_at from identities i join users u on u.id = i.user_id
      where i.provider = 'github' and i.provider_id = $1`,
    [String(person.id)],
  );
  t.equal(identity.rows.length, 1, 'the account is committed with the refusal');
  t.equal(identity.rows[0].email, null, 'no address is taken as the account’s when none is primary');
  t.equal(identity.rows[0].email_confirmed_at, null);
  t.match(identity.rows[0].identity_data, { email: 'last-listed@example.com', email_verified: true }, 'identity_data names the last one');
  t.equal(smtp.mails.length, mailsBefore, 'no confirmation mail: there is no address to send it to');
});

t.test('MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: the session is issued for the unconfirmed account, the mail still sent', async (t) => {
  const { location } = await signIn(lenient, githubUser('unverified-allowed@example.com', false));
  const f = fragmentOf(location);
  t.ok(f.access_token, 'a session in the fragment');
  const me = await lenient.request('GET', '/user', { token: f.access_token });
  t.equal(me.body.email, 'unverified-allowed@example.com');
  t.equal(me.body.email_confirmed_at, undefined, 'still unconfirmed');
  await smtp.waitForMail('unverified-allowed@example.com');
});

t.test("EXTERNAL_REDIRECT_URL: sessions and the flow's errors go there, not to redirect_to or SITE_URL", async (t) => {
  const session = await signIn(lenient, githubUser('verified-fixed@example.com', true), 'https://app.example.test/elsewhere');
  t.equal(session.location.origin + session.location.pathname, 'https://fixed.example.test/after-oauth');
  t.ok(fragmentOf(session.location).access_token);

  const badState = await callback(lenient, new URLSearchParams({ code: 'x', state: 'not-a-uuid' }));
  t.equal(
    badState.location.origin + badState.location.pathname,
    'http://localhost:3000/',
    'a bad state names no flow: SITE_URL, as the original',
  );
  t.equal(badState.location.searchParams.get('error_code'), 'bad_oauth_state');

  gh.approveAs = 999_999; // nobody: GitHub's user API refuses the token, the profile step fails
  const url = await authorizeUrl(lenient, 'provider=github&redirect_to=https://app.example.test/elsewhere');
  const failed = await callback(lenient, await gh.approve(url.href));
  t.equal(failed.location.origin + failed.location.pathname, 'https://fixed.example.test/after-oauth');
  t.ok(failed.location.searchParams.get('error_code'));

  const plain = await signIn(api, githubUser('verified-plain@example.com', true), 'https://app.example.test/elsewhere');
  t.equal(plain.location.origin + plain.location.pathname, 'https://app.example.test/elsewhere', 'without the setting: redirect_to');
});

t.test('MAILER_AUTOCONFIRM and MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS together stop start-up, as the original', async (t) => {
  t.throws(
    () =>
      loadConfig({
        envFile: null,
        env: { AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: 'true' },
      }),
    /MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: cannot be true together with MAILER_AUTOCONFIRM/,
  );
});
