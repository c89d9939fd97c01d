// ConfirmationURL (a wire format clients parse, REFERENCE 7.2) and the Go-template field subset.
import t from 'tap';
import { buildConfirmationUrl, linkPathFor, VERIFICATION_TYPES } from '../dist/server/delivery/mail/mailer.js';
import { escapeHtml, lookupIn, renderGoTemplate } from '../dist/server/delivery/mail/go-template.js';
import { htmlToText } from '../dist/server/delivery/mail/plain-text.js';

const urlPaths = { invite: '/invite', confirmation: '/confirm', recovery: '/recover', emailChange: '/change' };
const link = (path: string, redirectTo = '', externalUrl = 'https://auth.example.com/auth/v1') =>
  buildConfirmationUrl({ externalUrl, path, tokenHash: 'abc123', type: 'recovery', redirectTo });

t.test('each kind of link carries the type GET /verify expects', async (t) => {
  t.same(VERIFICATION_TYPES, {
    invite: 'invite',
    confirmation: 'signup',
    recovery: 'recovery',
    magicLink: 'magiclink',
    emailChange: 'email_change',
  });
  t.equal(
    buildConfirmationUrl({ externalUrl: 'https://a.test', path: '/verify', tokenHash: 'h', type: 'magicLink', redirectTo: '' }),
    'https://a.test/verify?token=h&type=magiclink&redirect_to=',
  );
});

t.test('magic links use the recovery URL path; the others their own', async (t) => {
  t.equal(linkPathFor(urlPaths, 'magicLink'), '/recover');
  t.equal(linkPathFor(urlPaths, 'invite'), '/invite');
  t.equal(linkPathFor(urlPaths, 'confirmation'), '/confirm');
  t.equal(linkPathFor(urlPaths, 'recovery'), '/recover');
  t.equal(linkPathFor(urlPaths, 'emailChange'), '/change');
});

t.test('an absolute path replaces the base path; a relative one is resolved against it', async (t) => {
  t.equal(link('/verify'), 'https://auth.example.com/verify?token=abc123&type=recovery&redirect_to=');
  t.equal(link('/auth/v1/verify'), 'https://auth.example.com/auth/v1/verify?token=abc123&type=recovery&redirect_to=');
  t.equal(link('verify'), 'https://auth.example.com/auth/verify?token=abc123&type=recovery&redirect_to=');
  t.equal(
    link('/verify', '', 'https://auth.example.com/auth/v1/'),
    'https://auth.example.com/verify?token=abc123&type=recovery&redirect_to=',
  );
});

t.test('redirect_to is left as is unless it holds &, =, #, % or +', async (t) => {
  t.equal(
    link('/verify', 'https://app.test/welcome'),
    'https://auth.example.com/verify?token=abc123&type=recovery&redirect_to=https://app.test/welcome',
  );
  t.equal(
    link('/verify', 'https://app.test/cb?a=1&b=two words#top'),
    'https://auth.example.com/verify?token=abc123&type=recovery&redirect_to=https%3A%2F%2Fapp.test%2Fcb%3Fa%3D1%26b%3Dtwo+words%23top',
  );
  for (const target of ['https://app.test/%5c@x', 'https://app.test/a+b']) {
    const carried = new URL(link('/verify', target)).searchParams.get('redirect_to');
    t.equal(carried, target, `${target} reads back unchanged: the link's decoder would turn %5c into \\ and + into a space`);
  }
});

t.test('the token is query-escaped (PKCE hashes carry a prefix)', async (t) => {
  const url = buildConfirmationUrl({
    externalUrl: 'https://a.test',
    path: '/verify',
    tokenHash: 'pkce_a b',
    type: 'invite',
    redirectTo: '',
  });
  t.equal(url, 'https://a.test/verify?token=pkce_a+b&type=invite&redirect_to=');
});

const vars = lookupIn({ Name: 'Ada', Count: 3, Data: { team: 'A & B', nested: { x: 'deep' }, list: [1] } });

t.test('fields render with and without spaces, Data keys included', async (t) => {
  t.equal(renderGoTemplate('{{ .Name }}|{{.Name}}|{{  .Count  }}|{{ .Data.team }}|{{ .Data.nested.x }}', vars), 'Ada|Ada|3|A & B|deep');
});

t.test('unknown fields and fields of non-objects render empty; lists and maps print as Go prints them', async (t) => {
  t.equal(
    renderGoTemplate(
      '[{{ .Missing }}][{{ .Data.list }}][{{ .Data.nested }}][{{ if .Name }}][{{ end }}][{{ printf "%s" .Name }}][{{ .Name.x }}]',
      vars,
    ),
    '[][[1]][map[x:deep]][][][Ada][]',
  );
  t.equal(renderGoTemplate('[{{ .constructor }}][{{ .Data.toString }}]', vars), '[][]', 'only own properties');
});

t.test('trim markers remove the whitespace on their side', async (t) => {
  t.equal(renderGoTemplate('a  {{- .Name -}}  b {{ .Name -}}\n c', vars), 'aAdab Adac');
  t.throws(() => renderGoTemplate('{{-.Name}}', vars), { name: 'GoTemplateSyntaxError' }, 'a dash without a space is not a trim marker');
});

t.test('escaping applies to field values only, with the entities Go emits', async (t) => {
  const lookup = lookupIn({ V: `<a href="x">&'` });
  t.equal(renderGoTemplate('<b>{{ .V }}</b>', lookup, escapeHtml), '<b>&lt;a href=&#34;x&#34;&gt;&amp;&#39;</b>');
});

t.test('the plain-text alternative keeps words and spells out links', async (t) => {
  const html =
    '<h2>Magic Link</h2>\n\n<p>Follow this link:</p>\n<p><a href="https://a.test/v?x=1&amp;y=2">Log In</a></p><p>Code: 1&lt;2</p>';
  t.equal(htmlToText(html), 'Magic Link\n\nFollow this link:\n\nLog In (https://a.test/v?x=1&y=2)\n\nCode: 1<2');
});
