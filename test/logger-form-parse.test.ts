// The original's request logger parses the form of every request but /health before any handler runs
// (for its referer field, and /token's grant_type), so a POST with an application/x-www-form-urlencoded
// body has that body read into the form: its redirect_to is the referer, /token's grant_type may come
// from it, and a handler decoding JSON afterwards finds the body empty. A `redirect_to` header spares the
// body, except on /token (docs/api.md#forms-read-before-the-handler).
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { uniqueEmail } from './helpers/accounts.js';

const SITE_URL = 'https://app.example.test';
const ALLOWED = 'https://preview.allowed.example.test/welcome';
const urlencoded = { 'content-type': 'application/x-www-form-urlencoded' };
const EMPTIED = 'Could not parse request body as JSON: unexpected end of JSON input';

const api = await startTestService({
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_SITE_URL: SITE_URL,
  AUTH_URI_ALLOW_LIST: 'https://*.allowed.example.test/**',
});
t.teardown(() => api.stop());

/** The request line of the one request carrying this X-Request-Id-like marker in its query. */
const lineOf = (marker: string) => {
  const line = api.logs().find((l) => l.msg === 'request completed' && typeof l.query === 'string' && l.query.includes(marker));
  if (!line) throw new Error(`no request line for ${marker}`);
  return line;
};
const form = (pairs: Record<string, string>) => new URLSearchParams(pairs).toString();

t.test('a JSON route given a urlencoded body answers as its decoder given an empty body', async (t) => {
  const email = uniqueEmail('form-signup');
  const res = await api.request('POST', '/signup?m=signup-form', {
    headers: urlencoded,
    raw: form({ email, password: 'Secret-password-1', redirect_to: ALLOWED }),
  });
  t.equal(res.status, 400);
  t.match(res.body, { error_code: 'bad_json', msg: EMPTIED });
  await waitForLine('signup-form');
  t.equal(lineOf('signup-form').referer, ALLOWED, "the body's redirect_to is the line's referer, as the allow list passes it");

  const evil = await api.request('POST', '/recover?m=recover-evil', {
    headers: urlencoded,
    raw: form({ email, redirect_to: 'https://evil.example/' }),
  });
  t.match(evil.body, { error_code: 'bad_json', msg: EMPTIED });
  await waitForLine('recover-evil');
  t.equal(lineOf('recover-evil').referer, SITE_URL, 'a body redirect_to the allow list refuses falls back to SITE_URL');
});

t.test('JSON text sent as a urlencoded form (curl -d) is not decoded, unless a redirect_to header spared it', async (t) => {
  const email = uniqueEmail('form-json');
  const json = JSON.stringify({ email, password: 'Secret-password-1' });
  const read = await api.request('POST', '/signup', { headers: urlencoded, raw: json });
  t.equal(read.status, 400);
  t.match(read.body, { error_code: 'bad_json', msg: EMPTIED });

  // The logger took redirect_to from the header and left the body for the handler.
  const spared = await api.request('POST', '/signup?m=signup-header', { headers: { ...urlencoded, redirect_to: ALLOWED }, raw: json });
  t.equal(spared.status, 200, spared.text);
  await waitForLine('signup-header');
  t.equal(lineOf('signup-header').referer, ALLOWED);
});

t.test('an empty body stays an empty body, whatever its media type', async (t) => {
  const bare = await api.request('POST', '/signup', { raw: '' });
  const typed = await api.request('POST', '/signup', { headers: urlencoded, raw: '' });
  t.strictSame([typed.status, typed.body], [bare.status, bare.body]);
  t.not(typed.body.error_code, 'bad_json');
});

t.test('POST /magiclink: the decoder finds the emptied body at its end (EOF)', async (t) => {
  const res = await api.request('POST', '/magiclink', { headers: urlencoded, raw: form({ email: uniqueEmail('form-ml') }) });
  t.equal(res.status, 400);
  t.match(res.body, { error_code: 'bad_json', msg: 'Could not read verification params: EOF' });
});

t.test("POST /token: the body's grant_type picks the grant and is logged; the body is read even with a redirect_to header", async (t) => {
  const res = await api.request('POST', '/token?m=token-form', {
    headers: urlencoded,
    raw: form({ grant_type: 'password', email: 'a@example.com' }),
  });
  t.equal(res.status, 400);
  t.match(res.body, { error_code: 'bad_json', msg: EMPTIED }, 'the password grant, decoding the emptied body');
  await waitForLine('token-form');
  t.equal(lineOf('token-form').grant_type, 'password');

  const json = JSON.stringify({ email: 'a@example.com', password: 'x' });
  const header = await api.request('POST', '/token?grant_type=password&m=token-header', {
    headers: { ...urlencoded, redirect_to: ALLOWED },
    raw: json,
  });
  t.match(header.body, { error_code: 'bad_json', msg: EMPTIED }, "the logger's grant_type lookup reads the form");
  await waitForLine('token-header');
  t.equal(lineOf('token-header').referer, ALLOWED);
});

/** A multipart/form-data body of text fields, as `curl -F name=value` sends it. */
const multipart = (pairs: Record<string, string>) => {
  const boundary = 'portcullis-test-boundary';
  const parts = Object.entries(pairs).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  return { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, raw: `${parts.join('')}--${boundary}--\r\n` };
};

t.test(
  'POST /token with a redirect_to header: the grant_type lookup reads a multipart body, which the grant then finds empty',
  async (t) => {
    const body = multipart({ grant_type: 'password', email: 'a@example.com', password: 'x' });
    const res = await api.request('POST', '/token?m=token-multipart', {
      headers: { ...body.headers, redirect_to: ALLOWED },
      raw: body.raw,
    });
    t.equal(res.status, 400);
    t.match(res.body, { error_code: 'bad_json', msg: EMPTIED }, "the body's grant_type picked the password grant");
    await waitForLine('token-multipart');
    t.equal(lineOf('token-multipart').grant_type, 'password');
    t.equal(lineOf('token-multipart').referer, ALLOWED);

    // The query's pairs come first in the form, the multipart fields after them.
    const both = await api.request('POST', '/token?grant_type=refresh_token&m=token-multipart-query', {
      headers: { ...body.headers, redirect_to: ALLOWED },
      raw: body.raw,
    });
    t.match(both.body, { error_code: 'bad_json', msg: EMPTIED }, 'the refresh grant, decoding the emptied body');
    await waitForLine('token-multipart-query');
    t.equal(lineOf('token-multipart-query').grant_type, 'refresh_token');

    // A body that does not parse as multipart has been read all the same.
    const json = JSON.stringify({ email: 'a@example.com', password: 'x' });
    const broken = await api.request('POST', '/token?grant_type=password', {
      headers: { ...body.headers, redirect_to: ALLOWED },
      raw: json,
    });
    t.match(broken.body, { error_code: 'bad_json', msg: EMPTIED });

    // Without a boundary the multipart reader stops before reading: the body is left for the grant.
    const unbounded = await api.request('POST', '/token?grant_type=password', {
      headers: { 'content-type': 'multipart/form-data', redirect_to: ALLOWED },
      raw: json,
    });
    t.equal(unbounded.status, 400);
    t.not(unbounded.body.error_code, 'bad_json', 'decoded: refused for its credentials, not for its body');
  },
);

t.test('a multipart body is not read where a ParseForm ran first, nor off /token', async (t) => {
  const body = multipart({ grant_type: 'password', email: 'a@example.com', password: 'x' });
  // No redirect_to header: the referer lookup's ParseForm left a form, so FormValue parses nothing more.
  const res = await api.request('POST', '/token?m=token-multipart-bare', body);
  t.equal(res.status, 400);
  t.match(res.body, { error_code: 'invalid_credentials', msg: 'unsupported_grant_type' });
  await waitForLine('token-multipart-bare');
  t.equal(lineOf('token-multipart-bare').grant_type, '');

  const queried = await api.request('POST', '/token?grant_type=password', body);
  t.equal(queried.body.error_code, 'bad_json');
  t.not(queried.body.msg, EMPTIED, 'the grant decodes the multipart text itself');

  const signup = await api.request('POST', '/signup', { headers: { ...body.headers, redirect_to: ALLOWED }, raw: body.raw });
  t.equal(signup.body.error_code, 'bad_json');
  t.not(signup.body.msg, EMPTIED, 'the handler decodes the multipart text itself');
});

t.test('a path that only decodes to /token matches no route: 404, whatever its form', async (t) => {
  const res = await api.request('POST', '/%74oken', { headers: urlencoded, raw: form({ grant_type: 'password' }) });
  t.equal(res.status, 404);
});

t.test('a JSON body is read as before', async (t) => {
  const res = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: 'nope' } });
  t.equal(res.status, 400);
  t.not(res.body.error_code, 'bad_json', 'decoded: refused for its refresh token, not for its body');
});

/** Lines are written after the answer: wait until the marked one is in the log file. */
async function waitForLine(marker: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (api.logs().some((l) => l.msg === 'request completed' && String(l.query ?? '').includes(marker))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
