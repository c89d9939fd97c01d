// The mailer against a real SMTP server (smtp-server + mailparser) and real template URLs.
import t, { type Test } from 'tap';
import { loadConfig } from '../dist/server/config/load.js';
import type { Config } from '../dist/server/config/load.js';
import { buildConfirmationUrl, createMailer, linkPathFor, type MailKind, type MailVars } from '../dist/server/delivery/mail/mailer.js';
import { captureLog, LEVEL } from './helpers/log.js';
import { startSmtpServer, type SmtpTestServer } from './helpers/smtp.js';
import { startTemplateServer, unusedPort, type TemplateServer } from './helpers/template-server.js';

let smtp: SmtpTestServer;
let templates: TemplateServer;
t.before(async () => {
  smtp = await startSmtpServer();
  templates = await startTemplateServer();
});
t.teardown(async () => {
  await smtp.close();
  await templates.close();
});

function configWith(env: Record<string, string> = {}): Config {
  return loadConfig({
    env: {
      AUTH_SMTP_HOST: '127.0.0.1',
      AUTH_SMTP_PORT: String(smtp.port),
      AUTH_SMTP_ADMIN_EMAIL: 'admin@portcullis.test',
      AUTH_SMTP_SENDER_NAME: 'Portcullis',
      AUTH_SITE_URL: 'http://localhost:3000',
      AUTH_API_EXTERNAL_URL: 'http://localhost:9999/auth/v1',
      AUTH_MAILER_URLPATHS_CONFIRMATION: '/auth/v1/verify',
      ...env,
    },
    envFile: null,
  });
}

/** A mailer that is closed when the test ends, so no pooled SMTP connection outlives it. */
function mailerFor(t: Test, config: Config, log = captureLog().log) {
  const mailer = createMailer(config, log);
  t.teardown(() => mailer.close());
  return mailer;
}

function vars(overrides: Partial<MailVars> = {}): MailVars {
  return {
    SiteURL: 'http://localhost:3000',
    Email: 'ada@example.com',
    ConfirmationURL: 'http://localhost:9999/verify?token=h&type=signup&redirect_to=',
    Token: '123456',
    TokenHash: 'h',
    RedirectTo: '',
    Data: {},
    ...overrides,
  };
}

t.test('a confirmation mail arrives with From, To, subject and the link built from the config', async (t) => {
  const config = configWith();
  const link = buildConfirmationUrl({
    externalUrl: config.api.externalUrl,
    path: linkPathFor(config.mailer.urlPaths, 'confirmation'),
    tokenHash: 'c0ffee',
    type: 'confirmation',
    redirectTo: 'http://localhost:3000/welcome',
  });
  const sent = await mailerFor(t, config).send('confirmation', 'ada@example.com', vars({ ConfirmationURL: link }));

  const mail = await smtp.waitForMail('ada@example.com');
  t.equal(mail.to, 'ada@example.com');
  t.equal(mail.fromAddress, 'admin@portcullis.test');
  t.equal(mail.fromName, 'Portcullis');
  t.equal(mail.subject, 'Confirm Your Signup');
  t.equal(mail.parsed.messageId, sent.messageId);
  t.equal(mail.link, 'http://localhost:9999/auth/v1/verify?token=c0ffee&type=signup&redirect_to=http://localhost:3000/welcome');
  t.match(mail.html, '<h2>Confirm your signup</h2>');
  t.match(mail.text, 'Alternatively, enter the code: 123456');
  t.match(mail.text, `Confirm your mail (${link})`, 'the plain-text part spells the link out');
});

t.test('without SMTP_SENDER_NAME, From is the bare admin address, as the original writes it', async (t) => {
  const config = configWith({ AUTH_SMTP_SENDER_NAME: '' });
  await mailerFor(t, config).send('confirmation', 'bare-from@example.com', vars());
  const mail = await smtp.waitForMail('bare-from@example.com');
  t.equal(mail.from, 'admin@portcullis.test');
  t.equal(mail.fromName, '');
  t.match(mail.parsed.headerLines.find((h) => h.key === 'from')?.line, /^From: admin@portcullis\.test$/);
});

t.test("SMTP_HEADERS adds its fields to every mail, $messageType filled in with the original's type name", async (t) => {
  const config = configWith({
    AUTH_SMTP_HEADERS: JSON.stringify({ 'X-Mail-Kind': ['auth-$messageType'], 'X-Two': ['one', 'two', ''], '': ['nameless'] }),
  });
  t.strictSame(config.warnings, []);
  const mailer = mailerFor(t, config);
  await mailer.send('magicLink', 'headers-magic@example.com', vars());
  await mailer.send('passwordChangedNotification', 'headers-note@example.com', vars());
  await mailer.send('reauthentication', 'headers-reauth@example.com', vars({ ConfirmationURL: '' }));
  const magic = await smtp.waitForMail('headers-magic@example.com');
  t.equal(magic.parsed.headers.get('x-mail-kind'), 'auth-magic_link');
  t.strictSame(
    magic.parsed.headerLines.filter((h) => h.key === 'x-two').map((h) => h.line),
    ['X-Two: one', 'X-Two: two'],
    'a field per value, empty values left out',
  );
  const note = await smtp.waitForMail('headers-note@example.com');
  t.equal(note.parsed.headers.get('x-mail-kind'), 'auth-password_changed_notification');
  const reauth = await smtp.waitForMail('headers-reauth@example.com');
  t.equal(reauth.parsed.headers.get('x-mail-kind'), 'auth-reauthenticate', "the original's older name for this one");
});

t.test('SMTP_HEADERS that are not an object of string lists are ignored with a warning, as the original', async (t) => {
  for (const text of ['{"X-A": "not a list"}', 'not json', '["X-A"]', '{"X-A": [1]}']) {
    const config = configWith({ AUTH_SMTP_HEADERS: text });
    t.equal(config.smtp.headers, '', text);
    t.match(config.warnings, [/AUTH_SMTP_HEADERS: not a JSON object of header name → list of values; ignored/], text);
  }
  const config = configWith({ AUTH_SMTP_HEADERS: '{"X-A": ["not a list"]}' });
  t.equal(config.smtp.headers, '{"X-A": ["not a list"]}');
  // Mail still goes out without them.
  const plain = configWith({ AUTH_SMTP_HEADERS: 'not json' });
  await mailerFor(t, plain).send('confirmation', 'headers-none@example.com', vars());
  const mail = await smtp.waitForMail('headers-none@example.com');
  t.equal(mail.parsed.headers.get('x-a'), undefined);
});

t.test('the default subject of each kind comes from the config defaults', async (t) => {
  const mailer = mailerFor(t, configWith());
  const expected: Record<MailKind, string> = {
    invite: 'You have been invited',
    confirmation: 'Confirm Your Signup',
    recovery: 'Reset Your Password',
    magicLink: 'Your Magic Link',
    emailChange: 'Confirm Email Change',
    reauthentication: 'Confirm reauthentication',
  };
  for (const [kind, subject] of Object.entries(expected) as Array<[MailKind, string]>) {
    const to = `subject-${kind.toLowerCase()}@example.com`;
    await mailer.send(kind, to, vars({ NewEmail: 'new@example.com' }));
    t.equal((await smtp.waitForMail(to)).subject, subject, kind);
  }
});

t.test('subjects fill in variables as plain text', async (t) => {
  const mailer = mailerFor(
    t,
    configWith({
      AUTH_MAILER_SUBJECTS_REAUTHENTICATION: '{{ .Token }} is your code',
      AUTH_MAILER_SUBJECTS_INVITE: 'Welcome {{.Data.team}}',
    }),
  );
  await mailer.send('reauthentication', 'reauth@example.com', vars({ ConfirmationURL: '' }));
  t.equal((await smtp.waitForMail('reauth@example.com')).subject, '123456 is your code');
  await mailer.send('invite', 'invited@example.com', vars({ Data: { team: 'Tom & Jerry' } }));
  t.equal((await smtp.waitForMail('invited@example.com')).subject, 'Welcome Tom & Jerry', 'not HTML-escaped');
});

t.test('the default email-change body names both addresses', async (t) => {
  await mailerFor(t, configWith()).send('emailChange', 'old@example.com', vars({ Email: 'old@example.com', NewEmail: 'new@example.com' }));
  t.match((await smtp.waitForMail('old@example.com')).text, 'from old@example.com to new@example.com');
});

t.test('a template served over HTTP is used, its variables filled and HTML-escaped', async (t) => {
  templates.set(
    '/confirm.html',
    '<p>Hi {{ .Data.name }}, <a href="{{.ConfirmationURL}}">go</a> {{- /* a comment */ -}} {{ .Token }}{{ .Nope }}{{ if .X }}x{{ end }}</p>',
  );
  const mailer = mailerFor(t, configWith({ AUTH_MAILER_TEMPLATES_CONFIRMATION: `${templates.baseUrl}/confirm.html` }));
  await mailer.send(
    'confirmation',
    'tpl@example.com',
    vars({ Data: { name: 'Ada <Lovelace>' }, ConfirmationURL: 'http://x/verify?token=1&type=signup' }),
  );
  const mail = await smtp.waitForMail('tpl@example.com');
  t.equal(mail.html, '<p>Hi Ada &lt;Lovelace&gt;, <a href="http://x/verify?token=1&amp;type=signup">go</a>123456</p>');
  t.equal(mail.link, 'http://x/verify?token=1&type=signup');
});

t.test('a template location without http is fetched under SITE_URL', async (t) => {
  templates.set('/mail/invite.html', '<p>Join {{ .SiteURL }}</p>');
  const mailer = mailerFor(t, configWith({ AUTH_SITE_URL: `${templates.baseUrl}/`, AUTH_MAILER_TEMPLATES_INVITE: '/mail/invite.html' }));
  await mailer.send('invite', 'relative@example.com', vars({ SiteURL: 'https://app.test' }));
  t.equal((await smtp.waitForMail('relative@example.com')).html, '<p>Join https://app.test</p>');
});

const unusable: Array<[string, () => Promise<string>]> = [
  ['down (connection refused)', async () => `http://127.0.0.1:${await unusedPort()}/t.html`],
  ['answering 404', async () => `${templates.baseUrl}/missing.html`],
  [
    'over the size cap',
    async () => {
      templates.set('/big.html', 'x'.repeat(1_000_001));
      return `${templates.baseUrl}/big.html`;
    },
  ],
  [
    'that does not parse',
    async () => {
      templates.set('/broken.html', '<p>{{ if .Data.x }}unclosed</p>');
      return `${templates.baseUrl}/broken.html`;
    },
  ],
  [
    'over the size cap without Content-Length',
    async () => {
      templates.set('/big-chunked.html', { body: 'y'.repeat(1_000_001), chunked: true });
      return `${templates.baseUrl}/big-chunked.html`;
    },
  ],
];
for (const [why, location] of unusable) {
  t.test(`a template URL ${why} falls back to the built-in default`, async (t) => {
    const { log, lines } = captureLog();
    const mailer = mailerFor(t, configWith({ AUTH_MAILER_TEMPLATES_RECOVERY: await location() }), log);
    const to = `fallback-${unusable.findIndex(([w]) => w === why)}@example.com`;
    await mailer.send('recovery', to, vars({ ConfirmationURL: 'http://x/verify?token=r&type=recovery' }));
    const mail = await smtp.waitForMail(to);
    t.match(mail.html, '<h2>Reset password</h2>');
    t.equal(mail.link, 'http://x/verify?token=r&type=recovery');
    t.ok(
      lines.some((l) => l.level === LEVEL.warn && /built-in default/.test(l.msg)),
      'the fallback is logged',
    );
  });
}

t.test('a template that runs past the render limits falls back to the built-in body', async (t) => {
  templates.set('/loop.html', '{{ range .Data.n }}{{ range $.Data.n }}{{ range $.Data.n }}.{{ end }}{{ end }}{{ end }}');
  const { log, lines } = captureLog();
  const mailer = mailerFor(t, configWith({ AUTH_MAILER_TEMPLATES_MAGIC_LINK: `${templates.baseUrl}/loop.html` }), log);
  await mailer.send('magicLink', 'loop@example.com', vars({ Data: { n: Array.from({ length: 100 }, (_, i) => i) } }));
  t.match((await smtp.waitForMail('loop@example.com')).html, '<h2>Magic Link</h2>');
  t.ok(lines.some((l) => l.level === LEVEL.warn && /could not be rendered/.test(l.msg)));
});

t.test('the login from SMTP_USER and SMTP_PASS is used', async (t) => {
  await mailerFor(t, configWith({ AUTH_SMTP_USER: 'mailer', AUTH_SMTP_PASS: 's3cret' })).send('magicLink', 'auth@example.com', vars());
  t.same((await smtp.waitForMail('auth@example.com')).auth, { username: 'mailer', password: 's3cret' });
});

t.test('a recipient the SMTP server rejects makes send reject', async (t) => {
  smtp.failNext(550, 'No such user here');
  const sending = mailerFor(t, configWith()).send('recovery', 'nobody@example.com', vars());
  await t.rejects(sending, { name: 'MailSendError', message: /recovery mail failed.*No such user here/ });
});

t.test("SMTP_LOGGING_ENABLED: one mail.send line per attempt, sent or refused, as the original's mail logging", async (t) => {
  const mailLines = (lines: Array<Record<string, unknown>>) => lines.filter((l) => l.msg === 'mail.send');
  const quiet = captureLog();
  await mailerFor(t, configWith(), quiet.log).send('confirmation', 'log-off@example.com', vars());
  await smtp.waitForMail('log-off@example.com');
  t.strictSame(mailLines(quiet.lines), [], 'off by default: recipients stay out of the log');

  const logged = captureLog();
  const mailer = mailerFor(t, configWith({ AUTH_SMTP_LOGGING_ENABLED: 'true' }), logged.log);
  await mailer.send('magicLink', 'log-on@example.com', vars());
  await smtp.waitForMail('log-on@example.com');
  smtp.failNext(550, 'No such user here');
  await t.rejects(mailer.send('recovery', 'log-refused@example.com', vars()));
  t.match(mailLines(logged.lines), [
    {
      level: LEVEL.info,
      event: 'mail.send',
      mail_type: 'magic_link',
      mail_from: '"Portcullis" <admin@portcullis.test>',
      mail_to: 'log-on@example.com',
    },
    { level: LEVEL.info, event: 'mail.send', mail_type: 'recovery', mail_to: 'log-refused@example.com' },
  ]);
  t.equal(mailLines(logged.lines).length, 2);
});

t.test('a recipient is one address, never a list', async (t) => {
  const sending = mailerFor(t, configWith()).send('recovery', 'victim@example.com, attacker@example.com', vars());
  await t.rejects(sending, { name: 'MailSendError' });
  t.notOk(smtp.mails.some((m) => m.envelopeTo.includes('attacker@example.com')));
});

t.test('an unreachable SMTP server makes send reject', async (t) => {
  const sending = mailerFor(t, configWith({ AUTH_SMTP_PORT: String(await unusedPort()) })).send('invite', 'a@example.com', vars());
  await t.rejects(sending, { name: 'MailSendError' });
});

t.test('without SMTP_HOST in development, mails are logged with link and code', async (t) => {
  const { log, lines } = captureLog();
  const mailer = mailerFor(t, configWith({ AUTH_SMTP_HOST: '' }), log);
  t.ok(
    lines.some((l) => l.level === LEVEL.warn && /NOT sent/.test(l.msg)),
    'said loudly at creation',
  );
  const { messageId } = await mailer.send('magicLink', 'dev@example.com', vars({ ConfirmationURL: 'http://x/verify?token=m' }));
  const line = lines.find((l) => l.messageId === messageId);
  t.same(line?.mail, {
    kind: 'magicLink',
    to: 'dev@example.com',
    subject: 'Your Magic Link',
    link: 'http://x/verify?token=m',
    code: '123456',
  });
  t.equal(line?.level, LEVEL.info);
  t.notOk(
    smtp.mails.some((m) => m.to === 'dev@example.com'),
    'nothing went over SMTP',
  );
});

t.test('without SMTP_HOST outside development, a dropped mail is logged without its link or code', async (t) => {
  const { log, lines } = captureLog();
  const mailer = mailerFor(t, { ...configWith({ AUTH_SMTP_HOST: '' }), development: false }, log);
  const { messageId } = await mailer.send('recovery', 'prod@example.com', vars());
  t.same(lines.find((l) => l.messageId === messageId)?.mail, { kind: 'recovery', to: 'prod@example.com', subject: 'Reset Your Password' });
});
