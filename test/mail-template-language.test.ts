// The template language of mail subjects and bodies: Go's text/template as templates written for the
// original service use it (conditionals on user_metadata, ranges, functions), rendered by the real mailer
// path end to end, and its limits.
import t from 'tap';
import { loadConfig } from '../dist/server/config/load.js';
import { escapeHtml, lookupIn, renderGoTemplate } from '../dist/server/delivery/mail/go-template.js';
import { RENDER_LIMITS } from '../dist/server/delivery/mail/go-template-exec.js';
import { authClient } from './helpers/auth-client.js';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { startTemplateServer } from './helpers/template-server.js';

const data = {
  Name: 'Ada',
  Data: {
    locale: 'fr',
    age: 30,
    big: 1234567,
    small: 0.00001,
    items: ['x', 'y', 'z'],
    scores: { b: 2, a: 1 },
    none: null,
    empty: [],
    'first-name': 'Zed',
    flag: true,
    html: '<b>&',
  },
};
const render = (template: string) => renderGoTemplate(template, lookupIn(data), escapeHtml);

t.test('if, else if and else choose one branch', async (t) => {
  const greeting = '{{ if eq .Data.locale "de" }}Hallo{{ else if eq .Data.locale "fr" }}Bonjour{{ else }}Hello{{ end }}';
  t.equal(render(greeting), 'Bonjour');
  t.equal(renderGoTemplate(greeting, lookupIn({ Data: { locale: 'de' } })), 'Hallo');
  t.equal(renderGoTemplate(greeting, lookupIn({ Data: {} })), 'Hello', 'a missing key equals no string');
  t.equal(render('{{ if .Data.none }}a{{ else }}b{{ end }}{{ if .Data.empty }}c{{ else }}d{{ end }}{{ if .Data.age }}e{{ end }}'), 'bde');
  t.equal(
    render('{{ if and .Data.flag (ge .Data.age 18) }}adult{{ end }}|{{ or .Data.none .Data.locale }}|{{ and .Data.flag .Data.none }}'),
    'adult|fr|',
  );
  t.equal(render('{{ if not .Data.flag }}x{{ else }}{{ not .Data.none }}{{ end }}'), 'true');
});

t.test('range over lists and maps, with variables, else, break and continue', async (t) => {
  t.equal(render('{{ range .Data.items }}<{{ . }}>{{ end }}'), '<x><y><z>');
  t.equal(render('{{ range $i, $item := .Data.items }}{{ $i }}={{ $item }};{{ end }}'), '0=x;1=y;2=z;');
  t.equal(render('{{ range $key, $value := .Data.scores }}{{ $key }}:{{ $value }} {{ end }}'), 'a:1 b:2 ', 'map keys in sorted order');
  t.equal(render('{{ range .Data.empty }}x{{ else }}none{{ end }}|{{ range .Data.missing }}x{{ else }}none{{ end }}'), 'none|none');
  t.equal(
    render('{{ range .Data.items }}{{ if eq . "y" }}{{ continue }}{{ end }}{{ if eq . "z" }}{{ break }}{{ end }}{{ . }}{{ end }}'),
    'x',
  );
  t.equal(render('{{ range .Data.items }}{{ $.Name }}{{ end }}'), 'AdaAdaAda', '$ is the root inside a range');
});

t.test('with rebinds dot; variables are declared, assigned and scoped', async (t) => {
  t.equal(render('{{ with .Data.locale }}[{{ . }}]{{ end }}{{ with .Data.missing }}x{{ else }}none{{ end }}'), '[fr]none');
  t.equal(render('{{ $x := .Name }}{{ $x }}{{ $x = "Bo" }} {{ $x }}'), 'Ada Bo', 'a declaration prints nothing');
  t.equal(render('{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ $y := 3 }}{{ end }}{{ $x }}{{ $y }}'), '2', '$y ends with its block');
});

t.test('functions, pipelines and printing follow Go', async (t) => {
  t.equal(
    render('{{ printf "%s is %d" .Name 36 }}|{{ .Name | printf "%q" }}|{{ printf "%v" .Data.items }}'),
    'Ada is 36|&#34;Ada&#34;|[x y z]',
  );
  t.equal(render('{{ print 1 2 "a" 3 }}|{{ println "a" 1 }}'), '1 2a3|a 1\n', 'Sprint spaces only between non-strings');
  t.equal(
    render('{{ len .Data.items }} {{ len "é" }} {{ index .Data "first-name" }} {{ index .Data.items 1 }} {{ slice .Data.items 1 }}'),
    '3 2 Zed y [y z]',
  );
  t.equal(render('{{ (index .Data "scores").b }} {{ eq (index .Data "locale") .Data.locale }} {{ eq .Data.age 1 30 }}'), '2 true true');
  t.equal(
    render('{{ .Data.age }} {{ .Data.big }} {{ .Data.small }} {{ .Data.scores }} {{ .Data.flag }}'),
    '30 1.234567e+06 1e-05 map[a:1 b:2] true',
  );
  t.equal(render('{{ "a b&c" | urlquery }} {{ js "<it\'s>" }} {{ html "<i>" }}'), 'a+b%26c \\u003Cit\\&#39;s\\u003E &amp;lt;i&amp;gt;');
  t.equal(render('{{ "}}" }}{{ `{{raw}}` }} {{ \'a\' }} {{ 0x1F }} {{ -2.5 }} {{ "tab\\there" }}'), '}}{{raw}} 97 31 -2.5 tab\there');
  t.equal(render('{{ .Data.html }}'), '&lt;b&gt;&amp;', 'printed values are escaped in bodies');
});

t.test('comments and trim markers', async (t) => {
  t.equal(render('a {{/* note */}}b {{- /* trimmed */ -}}  c'), 'a bc');
  t.equal(render('x  {{- .Name -}}  y\n{{ .Name -}}\n  z'), 'xAday\nAdaz');
});

t.test('an action that cannot be evaluated prints nothing, and a condition that cannot be is false', async (t) => {
  t.equal(render('[{{ .Name.first }}][{{ index .Data.items 9 }}][{{ lt .Data.age "x" }}][{{ $nope }}]'), '[][][][]');
  t.equal(render('{{ if lt .Data.age "x" }}yes{{ else }}no{{ end }}'), 'no');
  t.equal(render('[{{ .constructor }}][{{ .Data.toString }}][{{ .Data.__proto__ }}]'), '[][][]', 'own properties only');
});

t.test('a template that does not parse is refused as a whole', async (t) => {
  for (const bad of [
    '{{ if .X }}open',
    '{{ end }}',
    '{{ else }}',
    '{{ nosuchfunction .X }}',
    '{{ define "x" }}{{ end }}',
    '{{ template "x" }}',
    '{{ .X',
    '{{ }}',
    '{{ if }}{{ end }}',
    '{{ break }}',
    '{{ (.X }}',
    '{{ "open }}',
    '{{-.X}}',
    '{{/* open',
  ]) {
    t.throws(() => render(bad), { name: 'GoTemplateSyntaxError' }, bad);
  }
});

t.test('rendering is bounded: a template that loops over a user’s data too long stops', async (t) => {
  const items = Array.from({ length: 1000 }, (_, i) => i);
  const nested = '{{ range .Data.items }}{{ range $.Data.items }}.{{ end }}{{ end }}';
  t.throws(() => renderGoTemplate(nested, lookupIn({ Data: { items } })), { name: 'GoTemplateLimitError' });
  const long = `{{ range .Data.items }}${'x'.repeat(RENDER_LIMITS.characters / 500)}{{ end }}`;
  t.throws(() => renderGoTemplate(long, lookupIn({ Data: { items } })), { name: 'GoTemplateLimitError' });
  t.throws(() => render('{{ ('.repeat(200) + '1' + ') '.repeat(200) + '}}'), { name: 'GoTemplateSyntaxError' }, 'nesting is bounded');
});

t.test('a subject or SMS text that does not parse stops start-up, naming the variable', async (t) => {
  t.throws(
    () => loadConfig({ env: { AUTH_MAILER_SUBJECTS_INVITE: '{{ if .Data.x }}Hi', AUTH_SMS_TEMPLATE: 'Code {{ .Code }' }, envFile: null }),
    { message: /AUTH_MAILER_SUBJECTS_INVITE: is not a valid template[\s\S]*AUTH_SMS_TEMPLATE: is not a valid template/ },
  );
  t.doesNotThrow(() => loadConfig({ env: { AUTH_MAILER_SUBJECTS_INVITE: '{{ if .Data.x }}Hi{{ end }}' }, envFile: null }));
});

t.test('a sign-up mail chosen by the user’s locale, through auth-js, the service, a template server and SMTP', async (t) => {
  const smtp = await startSmtpServer();
  t.teardown(() => smtp.close());
  const templates = await startTemplateServer();
  t.teardown(() => templates.close());
  templates.set(
    '/confirm.html',
    '{{ if eq .Data.locale "fr" }}<p>Bonjour {{ .Data.name }}</p>{{ else }}<p>Hello {{ .Data.name }}</p>{{ end }}' +
      '{{ with .Data.teams }}<ul>{{ range . }}<li>{{ . }}</li>{{ end }}</ul>{{ end }}<a href="{{ .ConfirmationURL }}">go</a>',
  );
  const api = await startTestService({
    AUTH_SMTP_HOST: '127.0.0.1',
    AUTH_SMTP_PORT: String(smtp.port),
    AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com',
    AUTH_MAILER_TEMPLATES_CONFIRMATION: `${templates.baseUrl}/confirm.html`,
    AUTH_MAILER_SUBJECTS_CONFIRMATION: '{{ if eq .Data.locale "fr" }}Confirmez votre adresse{{ else }}Confirm your address{{ end }}',
  });
  t.teardown(() => api.stop());
  const client = authClient(api.url);

  const french = await client.signUp({
    email: 'amelie@example.com',
    password: 'secret99',
    options: { data: { locale: 'fr', name: 'Amélie', teams: ['bleu', '<rouge>'] } },
  });
  t.error(french.error);
  const frenchMail = await smtp.waitForMail('amelie@example.com');
  t.equal(frenchMail.subject, 'Confirmez votre adresse');
  t.match(frenchMail.html, /^<p>Bonjour Amélie<\/p><ul><li>bleu<\/li><li>&lt;rouge&gt;<\/li><\/ul><a href="http[^"]+\/verify\?token=/);

  const english = await client.signUp({ email: 'ada@example.com', password: 'secret99', options: { data: { name: 'Ada' } } });
  t.error(english.error);
  const englishMail = await smtp.waitForMail('ada@example.com');
  t.equal(englishMail.subject, 'Confirm your address');
  t.match(englishMail.html, /^<p>Hello Ada<\/p><a href=/, 'no list without teams');
  const link = new URL(englishMail.link!);
  t.equal((await api.request('GET', link.pathname + link.search)).status, 303, 'and the link in it works');
});
