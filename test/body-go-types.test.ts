// A body member of the wrong JSON type fails the whole body as the original's Go decoder fails it: 400
// bad_json naming the struct, the field and its Go type, for the first such member in the body's order,
// before any other check of the route's and with nothing written (docs/errors.md#malformed-json-bodies).
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { uniqueEmail } from './helpers/accounts.js';

const api = await startTestService({});
t.teardown(() => api.stop());
const password = 'Secret-password-1';
const refused = (words: string) => ({
  status: 400,
  body: { code: 400, error_code: 'bad_json', msg: `Could not parse request body as JSON: json: cannot unmarshal ${words}` },
});
const answer = async (path: string, body: unknown) => {
  const res = await api.request('POST', path, { body });
  return { status: res.status, body: res.body };
};
const users = async () => (await api.db.query('select count(*)::int as n from users')).rows[0].n;

t.test('the first mistyped member in the body, not in the fields declared order, is named', async (t) => {
  const before = await users();
  t.strictSame(
    await answer('/signup', { password: 1, email: 2 }),
    refused('number into Go struct field SignupParams.password of type string'),
  );
  t.strictSame(
    await answer('/signup', { data: 'x', email: 2 }),
    refused('string into Go struct field SignupParams.data of type map[string]interface {}'),
  );
  t.strictSame(await answer('/signup', { email: 2, data: 'x' }), refused('number into Go struct field SignupParams.email of type string'));
  t.equal(await users(), before, 'nothing written');
});

t.test('before the route checks anything else, and named by the declared field however it was spelled', async (t) => {
  // Without the type error this body would be refused for its address; the decoding comes first.
  t.strictSame(
    await answer('/signup', { email: 'not an address', PassWord: true }),
    refused('bool into Go struct field SignupParams.password of type string'),
  );
  t.strictSame(
    await answer('/token?grant_type=refresh_token', { Refresh_Token: ['x'] }),
    refused('array into Go struct field RefreshTokenGrantParams.refresh_token of type string'),
  );
  t.strictSame(
    await answer('/token?grant_type=pkce', { auth_code: 'x', code_verifier: {} }),
    refused('object into Go struct field PKCEGrantParams.code_verifier of type string'),
  );
  t.strictSame(
    await answer('/otp', { email: uniqueEmail('otp'), create_user: 'no' }),
    refused('string into Go struct field OtpParams.create_user of type bool'),
  );
  t.strictSame(await answer('/recover', { email: 5 }), refused('number into Go struct field RecoverParams.email of type string'));
});

t.test('null, members no field takes, and maps holding anything are no type error', async (t) => {
  const email = uniqueEmail('fine');
  const res = await api.request('POST', '/signup', {
    body: {
      email,
      password,
      phone: null,
      channel: null,
      nickname: 7,
      extra: [1, { a: true }],
      data: { n: 1, list: [1, 'a'], nested: { b: null } },
    },
  });
  t.equal(res.status, 200, res.text);
  t.match((res.body.user ?? res.body).user_metadata, { n: 1, list: [1, 'a'], nested: { b: null } });
});
