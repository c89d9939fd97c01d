// A body that is well-formed JSON but no object (`[]`, `1`, `"x"`, `true`) fails the original's decoding into
// the endpoint's params struct, and it answers 400 bad_json in Go's words, naming that struct: "Could not
// parse request body as JSON: json: cannot unmarshal array into Go value of type api.SignupParams". We said
// "expected a JSON object" everywhere. `null` decodes into a struct as nothing, so it is read as {}.
import t from 'tap';
import { startTestService, type TestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { signUp, uniqueEmail } from './helpers/accounts.js';
import { enrollTotp } from './helpers/mfa.js';
import { PASSKEY_ENV } from './helpers/passkeys.js';

const api = await startTestService({ ...PASSKEY_ENV, AUTH_EXTERNAL_WEB3_SOLANA_ENABLED: 'true', AUTH_CUSTOM_OAUTH_ENABLED: 'true' });
t.teardown(() => api.stop());
const admin = await adminToken();
const user = await signUp(api);
const factor = await enrollTotp(api, user.access_token);
const created = await api.request('POST', '/admin/users', {
  token: admin,
  body: { email: uniqueEmail('target'), password: 'Secret-password-1' },
});
const target: string = created.body.id;
const factorOwner = await signUp(api);
const ownersFactor = await enrollTotp(api, factorOwner.access_token);

/** The JSON kinds that are no object, each with the word Go's decoder uses for it. */
const NOT_OBJECTS: Array<[string, string]> = [
  ['[]', 'array'],
  ['[{"email":"a@example.com"}]', 'array'],
  ['1', 'number'],
  ['-2.5e3', 'number'],
  ['"x"', 'string'],
  ['true', 'bool'],
  ['false', 'bool'],
];

const send = (service: TestService, method: string, path: string, raw: string, token?: string) =>
  service.request(method, path, { token, raw, headers: { 'content-type': 'application/json' } });

const goWords = (kind: string, type: string) => ({
  code: 400,
  error_code: 'bad_json',
  msg: `Could not parse request body as JSON: json: cannot unmarshal ${kind} into Go value of type ${type}`,
});

t.test('each endpoint names the Go type its original decodes the body into', async (t) => {
  const routes: Array<[string, string, string, string?]> = [
    ['POST', '/signup', 'api.SignupParams'],
    ['POST', '/token?grant_type=password', 'api.PasswordGrantParams'],
    ['POST', '/token?grant_type=refresh_token', 'api.RefreshTokenGrantParams'],
    ['POST', '/token?grant_type=pkce', 'api.PKCEGrantParams'],
    ['POST', '/token?grant_type=id_token', 'api.IdTokenGrantParams'],
    ['POST', '/token?grant_type=web3', 'api.Web3GrantParams'],
    ['POST', '/verify', 'api.VerifyParams'],
    ['POST', '/otp', 'api.OtpParams'],
    ['POST', '/recover', 'api.RecoverParams'],
    ['POST', '/resend', 'api.ResendConfirmationParams'],
    ['PUT', '/user', 'api.UserUpdateParams', user.access_token],
    ['POST', '/factors', 'api.EnrollFactorParams', user.access_token],
    ['POST', `/factors/${factor.id}/verify`, 'api.VerifyFactorParams', user.access_token],
    ['POST', '/passkeys/authentication/verify', 'api.PasskeyAuthenticationVerifyParams'],
    ['POST', '/passkeys/registration/verify', 'api.PasskeyRegistrationVerifyParams', user.access_token],
    ['PATCH', '/passkeys/7a1c2b9e-55d4-4c1f-9e0e-3f4b8a6d2c10', 'api.PasskeyUpdateParams', user.access_token],
    ['POST', '/invite', 'api.InviteParams', admin],
    ['POST', '/admin/users', 'api.AdminUserParams', admin],
    ['PUT', `/admin/users/${target}`, 'api.AdminUserParams', admin],
    ['DELETE', `/admin/users/${target}`, 'api.adminUserDeleteParams', admin],
    ['POST', '/admin/generate_link', 'api.GenerateLinkParams', admin],
    ['POST', '/admin/sso/providers', 'api.CreateSSOProviderParams', admin],
    ['POST', '/admin/custom-providers', 'api.AdminCustomOAuthProviderParams', admin],
  ];
  for (const [method, path, type, token] of routes) {
    for (const [raw, kind] of NOT_OBJECTS) {
      const res = await send(api, method, path, raw, token);
      t.strictSame([res.status, res.body], [400, goWords(kind, type)], `${method} ${path} ${raw}`);
    }
  }
});

t.test("an admin's factor update names its own type", async (t) => {
  const res = await send(api, 'PUT', `/admin/users/${factorOwner.user.id}/factors/${ownersFactor.id}`, '[]', admin);
  t.strictSame([res.status, res.body], [400, goWords('array', 'api.adminUserUpdateFactorParams')]);
});

t.test('with captcha on, the captcha check decodes the body first, into its own type', async (t) => {
  const guarded = await startTestService({ AUTH_SECURITY_CAPTCHA_ENABLED: 'true', AUTH_SECURITY_CAPTCHA_SECRET: 'shh' });
  t.teardown(() => guarded.stop());
  for (const path of ['/signup', '/token?grant_type=password', '/recover', '/otp']) {
    const res = await send(guarded, 'POST', path, '[]');
    t.strictSame([res.status, res.body], [400, goWords('array', 'api.captchaRequest')], path);
  }
  // The refresh grant is never captcha-checked: its own decoding speaks.
  const refresh = await send(guarded, 'POST', '/token?grant_type=refresh_token', '"x"');
  t.strictSame([refresh.status, refresh.body], [400, goWords('string', 'api.RefreshTokenGrantParams')]);
});

t.test('null is an empty body: the original decodes it into its struct as nothing', async (t) => {
  for (const [method, path, token] of [
    ['POST', '/recover', undefined],
    ['POST', '/token?grant_type=password', undefined],
    ['PUT', '/user', user.access_token],
    ['POST', '/admin/users', admin],
  ] as Array<[string, string, string | undefined]>) {
    const empty = await send(api, method, path, '{}', token);
    const nulled = await send(api, method, path, 'null', token);
    t.not(empty.body.error_code, 'bad_json', `${method} ${path} {}`);
    t.strictSame([nulled.status, nulled.body], [empty.status, empty.body], `${method} ${path} null`);
  }
});

t.test('where the original reads no body, or its words differ, the answer is unchanged', async (t) => {
  // A TOTP challenge never reads its body in the original, so a list there is no error.
  const totp = await send(api, 'POST', `/factors/${factor.id}/challenge`, '[]', user.access_token);
  t.equal(totp.status, 200, totp.text);
  // /magiclink words its decoding errors "Could not read verification params" (test/redirect-encoding-behaviour.test.ts);
  // POST /admin/users/{id} is ours.
  const generic = { code: 400, error_code: 'bad_json', msg: 'Could not parse request body as JSON: expected a JSON object' };
  const magic = await send(api, 'POST', '/magiclink', '[]');
  const magicWords = 'Could not read verification params: json: cannot unmarshal array into Go value of type api.MagicLinkParams';
  t.strictSame([magic.status, magic.body], [400, { code: 400, error_code: 'bad_json', msg: magicWords }]);
  const ours = await send(api, 'POST', '/admin/users/0b4f7c34-8e9c-4a51-a4c2-0d6b3b8e1f27', '[]', admin);
  t.strictSame([ours.status, ours.body], [400, generic]);
});

t.test("the original's other refusals come first, in their order", async (t) => {
  // Go checks the nesting while it checks the syntax, before decoding into the struct.
  const deep = await send(api, 'POST', '/signup', `${'['.repeat(10_001)}${']'.repeat(10_001)}`);
  t.strictSame(
    [deep.status, deep.body.msg],
    [400, "Could not parse request body as JSON: invalid character '[' exceeded max depth"],
    'a list nested too deep',
  );
  // A list is refused for being one, whatever it holds: the NUL escape is ours to refuse, and only in an object.
  const nul = await send(api, 'POST', '/signup', '["\\u0000"]');
  t.strictSame([nul.status, nul.body], [400, goWords('array', 'api.SignupParams')], 'a list holding a NUL escape');
  // A number too large for a float64 is still a number to the struct it cannot fill (json-number-range.ts
  // speaks only for numbers inside an object).
  const big = await send(api, 'POST', '/signup', '1e400');
  t.strictSame([big.status, big.body], [400, goWords('number', 'api.SignupParams')], 'a bare 1e400');
});
