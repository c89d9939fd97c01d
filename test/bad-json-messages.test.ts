// A body that is not JSON is 400 bad_json "Could not parse request body as JSON: <reason>", the reason
// in the words of the original's Go decoder (docs/errors.md#malformed-json-bodies), not Node's: clients
// written against the original match on them. Each malformed body goes to routes that read their body in different places.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());
const admin = await adminToken();

const ROUTES: Array<{ method: string; path: string; token?: string }> = [
  { method: 'POST', path: '/signup' },
  { method: 'POST', path: '/token?grant_type=password' },
  { method: 'POST', path: '/admin/users', token: admin },
];

const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part))));

// [what is wrong, the body, Go's words for it]
const CASES: Array<[string, string | Buffer, string]> = [
  ['not JSON at all', 'garbage', "invalid character 'g' looking for beginning of value"],
  ['cut short', '{"email":"a@example.com"', 'unexpected end of JSON input'],
  ['cut short inside a string', '{"email":"a@exam', 'unexpected end of JSON input'],
  ['a member without a value', '{"email"}', "invalid character '}' after object key"],
  ['members without a comma', '{"email":"a@example.com" "password":"x"}', `invalid character '"' after object key:value pair`],
  ['array elements without a comma', '{"data":[1 2]}', "invalid character '2' after array element"],
  ['a misspelt true', '{"data":{"x":trve}}', "invalid character 'v' in literal true (expecting 'u')"],
  ['a short null', '{"data":{"x":nul}}', "invalid character '}' in literal null (expecting 'l')"],
  ['a misspelt false', '{"data":{"x":fals3}}', "invalid character '3' in literal false (expecting 'e')"],
  ['a second value after the body', '{}{}', "invalid character '{' after top-level value"],
  ['single-quoted names', "{'email':'a@example.com'}", `invalid character '\\'' looking for beginning of object key string`],
  ['a trailing comma in an object', '{"email":"a@example.com",}', "invalid character '}' looking for beginning of object key string"],
  ['a trailing comma in an array', '{"data":{"x":[1,]}}', "invalid character ']' looking for beginning of value"],
  ['an unknown escape', '{"email":"a\\q"}', "invalid character 'q' in string escape code"],
  ['a bad \\u escape', '{"email":"\\u12G4"}', "invalid character 'G' in \\u hexadecimal character escape"],
  ['a sign without digits', '{"data":{"x":-a}}', "invalid character 'a' in numeric literal"],
  ['a point without digits', '{"data":{"x":1.}}', "invalid character '}' after decimal point in numeric literal"],
  ['an exponent without digits', '{"data":{"x":1e+}}', "invalid character '}' in exponent of numeric literal"],
  ['a leading zero', '{"data":{"x":01}}', "invalid character '1' after object key:value pair"],
  ['a raw line feed in a string', '{"email":"a\nb"}', "invalid character '\\n' in string literal"],
  ['a raw control byte in a string', bytes('{"email":"a', [0x01], '"}'), "invalid character '\\x01' in string literal"],
  [
    'a bell byte where a name should start',
    '{"email":\t\t"a", \u0007}',
    "invalid character '\\a' looking for beginning of object key string",
  ],
  ['a backslash as a value', '{"email":\\}', "invalid character '\\\\' looking for beginning of value"],
  // Go names the offending byte, read as the character of that number: é's first UTF-8 byte is Ã.
  ['a non-ASCII name without quotes', '{é:1}', "invalid character 'Ã' looking for beginning of object key string"],
  ['a byte order mark', bytes([0xef, 0xbb, 0xbf], '{}'), "invalid character 'ï' looking for beginning of value"],
  ['a non-breaking space byte', bytes('{"email":"a"', [0xa0], '}'), "invalid character '\\u00a0' after object key:value pair"],
  [
    'invalid UTF-8 where a value should start',
    bytes('{"email":', [0x80], '}'),
    "invalid character '\\u0080' looking for beginning of value",
  ],
  // A malformed body is refused for its syntax, whatever it holds (a NUL escape is refused only in JSON).
  ['cut short after a NUL escape', '{"email":"\\u0000"', 'unexpected end of JSON input'],
  // Go's walk stops at its depth limit before reaching the end of a body nested too deep.
  ['cut short too deep', `{"data":${'['.repeat(10_000)}`, "invalid character '[' exceeded max depth"],
];

t.test('a malformed body is answered 400 bad_json in the words of the original decoder', async (t) => {
  for (const { method, path, token } of ROUTES) {
    for (const [label, raw, reason] of CASES) {
      const res = await api.request(method, path, { token, raw, headers: { 'content-type': 'application/json' } });
      t.strictSame(
        { status: res.status, body: res.body },
        { status: 400, body: { code: 400, error_code: 'bad_json', msg: `Could not parse request body as JSON: ${reason}` } },
        `${method} ${path}: ${label}`,
      );
    }
  }
});

t.test('well-formed bodies are still read, and a NUL escape in one is still refused', async (t) => {
  const signedUp = await api.request('POST', '/signup', {
    raw: ' {"email":"well-formed@example.com","password":"Secret-99","data":{"n":-0.5e-3,"ok":true,"none":null}} ',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(signedUp.status, 200, signedUp.text);
  t.match(signedUp.body.user.user_metadata, { n: -0.0005, ok: true });
  const nul = await api.request('POST', '/signup', {
    raw: '{"email":"nul@example.com","password":"Secret-99","data":{"x":"\\u0000"}}',
    headers: { 'content-type': 'application/json' },
  });
  t.strictSame([nul.status, nul.body.msg], [400, 'Could not parse request body as JSON: NUL characters (\\u0000) are not allowed']);
});

t.test('a number too large for a float64 is refused, as the original decoder refuses it, not stored as null', async (t) => {
  const signUp = (data: string) =>
    api.request('POST', '/signup', {
      raw: `{"email":"${uniqueEmail('big')}","password":"Secret-99","data":${data}}`,
      headers: { 'content-type': 'application/json' },
    });
  for (const [data, number] of [
    ['{"big":1e400}', '1e400'],
    ['{"note":"1e999 in a string is text","big":[-2.5E+308]}', '-2.5E+308'],
    [`{"digits":${'9'.repeat(400)}}`, '9'.repeat(400)],
  ]) {
    const res = await signUp(data);
    t.strictSame(
      [res.status, res.body.error_code, res.body.msg],
      [400, 'bad_json', `Could not parse request body as JSON: json: cannot unmarshal number ${number} into Go value of type float64`],
      data.slice(0, 60),
    );
  }
  // The largest float64s and numbers that underflow to 0 are read, in both.
  const read = await signUp('{"max":1.7976931348623157e308,"tiny":1e-400,"big":1e300}');
  t.equal(read.status, 200, read.text);
  t.strictSame(read.body.user.user_metadata.max, 1.7976931348623157e308);
  t.equal(read.body.user.user_metadata.tiny, 0);
});
