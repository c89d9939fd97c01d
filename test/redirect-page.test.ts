// A redirect answering a GET carries the short HTML page Go's http.Redirect writes, which every redirect of
// the original's goes through: `<a href="target">Found</a>.` and two line feeds, the target HTML-escaped,
// as text/html. (A redirect answering a POST has neither body nor type, as there: sso-behaviour.test.ts.)
import t from 'tap';
import { startTestService } from './helpers/server.js';

const api = await startTestService({
  AUTH_EXTERNAL_GITHUB_ENABLED: 'true',
  AUTH_EXTERNAL_GITHUB_CLIENT_ID: 'client-id',
  AUTH_EXTERNAL_GITHUB_SECRET: 'client-secret',
  AUTH_EXTERNAL_GITHUB_REDIRECT_URI: 'http://localhost:9999/callback',
});
t.teardown(() => api.stop());

/** Go's htmlEscape, spelled out: the five characters HTML gives meaning to. */
const escaped = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&#34;').replaceAll("'", '&#39;');

t.test('GET /authorize: 302 with the page linking to the provider', async (t) => {
  const res = await api.request('GET', '/authorize?provider=github');
  t.equal(res.status, 302);
  const location = res.headers.get('location')!;
  t.match(location, /^https:\/\/github\.com\/login\/oauth\/authorize\?.*&/, 'a target with several parameters');
  t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
  t.equal(res.text, `<a href="${escaped(location)}">Found</a>.\n\n`);
  t.ok(res.text.includes('&amp;') && !/&(?!amp;|lt;|gt;|#34;|#39;)/.test(res.text), 'every & escaped');
});

t.test('GET /verify: a 303 says See Other', async (t) => {
  const res = await api.request(
    'GET',
    `/verify?type=signup&token=unknown&redirect_to=${encodeURIComponent("http://localhost:3000/a?x='1'&y=2")}`,
  );
  t.equal(res.status, 303);
  const location = res.headers.get('location')!;
  t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
  t.equal(res.text, `<a href="${escaped(location)}">See Other</a>.\n\n`);
});
