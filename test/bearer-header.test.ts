// How the Authorization header is read, byte for byte as the original reads it: its HTTP reader trims spaces
// and tabs off the value and keeps the first of several lines, then `(?i)^bearer (\S+$)` asks for the scheme
// in any case, exactly one space and a token with no whitespace. Anything else is 401 no_authorization, on
// user and admin endpoints alike. Sent over a raw socket: fetch would trim the value and join repeated lines.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { adminToken } from './helpers/admin.js';
import { answers, bodyText, exchange, statusOf } from './helpers/raw-http.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());
const port = Number(new URL(api.url).port);
const token = (await signUp(api)).access_token;

/** A header value for a test's name, the token shown as <token>. */
const shown = (value: string) => JSON.stringify(value.split(token).join('<token>'));

const NO_AUTHORIZATION = { code: 401, error_code: 'no_authorization', msg: 'This endpoint requires a valid Bearer token' };

/** GET `path` with these header lines, as bytes (latin1, so '\xc2\xa0' is UTF-8 no-break space); the status and body. */
async function get(path: string, lines: string[]): Promise<[number, any]> {
  const head = `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${lines.map((line) => `${line}\r\n`).join('')}Connection: close\r\n\r\n`;
  const { received } = await exchange(port, [Buffer.from(head, 'latin1')], () => false, { timeoutMs: 10_000 });
  const answer = answers(received)[0] ?? '';
  return [statusOf(answer), JSON.parse(bodyText(answer))];
}

t.test('the scheme in any case, one space, the token: accepted, with spaces and tabs around the value', async (t) => {
  for (const value of [
    `Bearer ${token}`,
    `bearer ${token}`,
    `BEARER ${token}`,
    `  Bearer ${token}`,
    `\tBearer ${token}`,
    `Bearer ${token}   `,
    `Bearer ${token}\t`,
  ]) {
    const [status] = await get('/user', [`Authorization: ${value}`]);
    t.equal(status, 200, shown(value));
  }
});

t.test('more than one space, a tab or a Unicode space after the scheme is 401 no_authorization', async (t) => {
  for (const between of ['  ', '\t', ' \t', '\xc2\xa0', '\xe3\x80\x80']) {
    const value = `Bearer${between}${token}`;
    t.strictSame(await get('/user', [`Authorization: ${value}`]), [401, NO_AUTHORIZATION], shown(value));
  }
  const admin = await get('/admin/users', [`Authorization: Bearer  ${await adminToken()}`]);
  t.strictSame(admin, [401, NO_AUTHORIZATION], 'an admin endpoint reads the header the same way');
  t.equal((await get('/admin/users', [`Authorization: Bearer ${await adminToken()}`]))[0], 200, 'with one space it is accepted');
});

t.test('no token, a token with a space in it, or no header at all is 401 no_authorization', async (t) => {
  for (const lines of [
    ['Authorization: Bearer '],
    ['Authorization: Bearer'],
    ['Authorization:'],
    [],
    [`Authorization: Bearer ${token.slice(0, 20)} ${token.slice(20)}`],
  ]) {
    t.strictSame(await get('/user', lines), [401, NO_AUTHORIZATION], shown(lines.join(' | ')));
  }
});

t.test('of two Authorization lines the first counts', async (t) => {
  t.equal((await get('/user', [`Authorization: Bearer ${token}`, 'Authorization: Bearer nope']))[0], 200);
  const [status, body] = await get('/user', ['Authorization: Bearer nope', `Authorization: Bearer ${token}`]);
  t.strictSame([status, body.error_code], [403, 'bad_jwt']);
});

// The original's parser decodes each segment with Go's unpadded base64url, which refuses any other byte and a
// lone final character; Node's decoders skip such bytes or drop that character, so such tokens verified here.
t.test('a segment Go cannot base64-decode is 403 bad_jwt naming the segment and the byte', async (t) => {
  const [header, claims, signature] = token.split('.');
  const malformed = (segment: string, at: number) => ({
    code: 403,
    error_code: 'bad_jwt',
    msg: `invalid JWT: unable to parse or verify signature, token is malformed: could not base64 decode ${segment}: illegal base64 data at input byte ${at}`,
  });
  const cases: Array<[string, ReturnType<typeof malformed>]> = [
    [`${token}=`, malformed('signature', signature.length)],
    [`${header}.${claims}.${loneFinal(signature)}`, malformed('signature', loneFinal(signature).length - 1)],
    [`${header}\xc2\xa0.${claims}.${signature}`, malformed('header', header.length)],
    [`${header}.${claims.slice(0, 5)}+${claims.slice(5)}.${signature}`, malformed('claim', 5)],
  ];
  for (const [value, expected] of cases) {
    t.strictSame(await get('/user', [`Authorization: Bearer ${value}`]), [403, expected], shown(value));
  }
});

/** The segment lengthened with valid characters until one is left over after the last group of four. */
function loneFinal(segment: string): string {
  let longer = `${segment}A`;
  while (longer.length % 4 !== 1) longer += 'A';
  return longer;
}
