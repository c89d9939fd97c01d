// Passkeys and Web3 sign-in compared with the original, black-box: what a client sees of the cases the other
// passkey and web3 test files leave out. Passkeys: a user without email or phone, the display name, the name
// a new passkey takes from its AAGUID, names
// counted in bytes, duplicates, the default limit, bodies the original never reads, a credential of another
// user, an unconfirmed phone. Web3: timestamps read as Go's time.Parse reads them (a one-digit hour, long
// fractions, offsets up to 24:60), lines trimmed of what Go's strings.TrimSpace trims, a Solana signature
// with line breaks, and Ethereum signatures in the other forms the original's recovery takes.
import t from 'tap';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { startTestService, type TestService } from './helpers/server.js';
import { signUp, uniqueEmail } from './helpers/accounts.js';
import { adminToken } from './helpers/admin.js';
import { PASSKEY_ENV, newAuthenticator, register, signInWithPasskey, storePasskey } from './helpers/passkeys.js';
import { base64Url, ethereumAccount, signInMessage, solanaAccount, type MessageFields } from './helpers/web3.js';

const api = await startTestService({
  ...PASSKEY_ENV,
  AUTH_SITE_URL: 'https://app.example.com',
  AUTH_EXTERNAL_WEB3_ETHEREUM_ENABLED: 'true',
  AUTH_EXTERNAL_WEB3_SOLANA_ENABLED: 'true',
  AUTH_RATE_LIMIT_WEB3: '1000',
});
t.teardown(() => api.stop());
const admin = await adminToken('service_role');

const web3 = (service: TestService, body: Record<string, unknown>) => service.request('POST', '/token?grant_type=web3', { body });
const ethereumSignIn = (fields: MessageFields = {}, account = ethereumAccount()) => {
  const message = signInMessage('Ethereum', account.address, fields);
  return { chain: 'ethereum', message, signature: account.sign(message) };
};
const validation = (msg: string) => ({ code: 400, error_code: 'validation_failed', msg });
const HOUR = 3_600_000;

// ---- passkeys ----

t.test('a wallet user (no email, no phone) registers a passkey named "" and signs in with it, as in the original', async (t) => {
  const signedIn = await web3(api, ethereumSignIn());
  t.equal(signedIn.status, 200, signedIn.text);
  const token = signedIn.body.access_token;
  const options = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  t.equal(options.status, 200);
  t.same(options.body.options.user, {
    id: Buffer.from(signedIn.body.user.id).toString('base64url'),
    name: '',
    displayName: '',
  });
  const authenticator = newAuthenticator();
  t.equal((await register(api, token, authenticator)).status, 200);
  const passkey = await signInWithPasskey(api, authenticator);
  t.equal(passkey.status, 200, passkey.text);
  t.equal(passkey.body.user.id, signedIn.body.user.id);
});

t.test("the options are in the original's shape: no hints, extensions or requireResidentKey, no empty credential list", async (t) => {
  const { access_token: token } = await signUp(api);
  const first = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  t.same(Object.keys(first.body), ['challenge_id', 'options', 'expires_at']);
  t.same(Object.keys(first.body.options), [
    'rp',
    'user',
    'challenge',
    'pubKeyCredParams',
    'timeout',
    'authenticatorSelection',
    'attestation',
  ]);
  t.strictSame(first.body.options.authenticatorSelection, { residentKey: 'required', userVerification: 'preferred' });
  t.match(first.body.options.challenge, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');

  const authenticator = newAuthenticator();
  t.equal((await register(api, token, authenticator)).status, 200);
  const second = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  t.same(Object.keys(second.body.options), [
    'rp',
    'user',
    'challenge',
    'pubKeyCredParams',
    'timeout',
    'excludeCredentials',
    'authenticatorSelection',
    'attestation',
  ]);
  t.strictSame(second.body.options.excludeCredentials, [{ type: 'public-key', id: authenticator.credentialId }], 'by id alone');

  const signIn = await api.request('POST', '/passkeys/authentication/options', { body: {} });
  t.same(Object.keys(signIn.body.options), ['challenge', 'timeout', 'rpId', 'userVerification']);
  t.same(signIn.body.options.userVerification, 'preferred');
});

t.test("registration options: the user's name is the email, the display name user_metadata.name when it is a string", async (t) => {
  for (const [data, displayName] of [
    [{ name: 'Ada Lovelace' }, 'Ada Lovelace'],
    [{ name: 42 }, null],
    [{ name: '' }, null],
  ] as const) {
    const email = uniqueEmail();
    const signedUp = await api.request('POST', '/signup', { body: { email, password: 'Secret-password-1', data } });
    const res = await api.request('POST', '/passkeys/registration/options', { token: signedUp.body.access_token, body: {} });
    t.equal(res.body.options.user.name, email);
    t.equal(res.body.options.user.displayName, displayName ?? email, JSON.stringify(data));
  }
});

t.test('renaming: 120 bytes of UTF-8 at most, names may repeat, null is no name, spaces are a name', async (t) => {
  const { access_token: token } = await signUp(api);
  const first = (await register(api, token, newAuthenticator())).body;
  const second = (await register(api, token, newAuthenticator())).body;
  const rename = (id: string, friendly_name: unknown) => api.request('PATCH', `/passkeys/${id}`, { token, body: { friendly_name } });

  const sixty = 'é'.repeat(60); // 60 characters, 120 bytes
  t.equal((await rename(first.id, sixty)).body.friendly_name, sixty);
  t.same((await rename(first.id, `${sixty}a`)).body, validation('friendly_name must be 120 characters or less'));
  t.same((await rename(first.id, '😀'.repeat(31))).body, validation('friendly_name must be 120 characters or less'), '31 × 4 bytes');
  t.equal((await rename(second.id, sixty)).status, 200, "another passkey's name may be taken again");
  t.same((await rename(first.id, null)).body, validation('friendly_name is required'));
  t.same((await api.request('PATCH', `/passkeys/${first.id}`, { token, body: {} })).body, validation('friendly_name is required'));
  t.equal((await rename(first.id, '   ')).body.friendly_name, '   ', 'not trimmed, as the original');
  const names = (await api.request('GET', '/passkeys', { token })).body.map((p: any) => p.friendly_name);
  t.same(names, ['   ', sixty]);
});

t.test('a rename answers the passkey in the list shape: last_used_at once it signed in', async (t) => {
  const { access_token: token } = await signUp(api);
  const authenticator = newAuthenticator();
  const created = (await register(api, token, authenticator)).body;
  t.equal((await signInWithPasskey(api, authenticator)).status, 200);
  const renamed = await api.request('PATCH', `/passkeys/${created.id}`, { token, body: { friendly_name: 'Phone' } });
  t.same(Object.keys(renamed.body), ['id', 'friendly_name', 'created_at', 'last_used_at']);
  t.equal(renamed.body.created_at, created.created_at);
  const listed = (await api.request('GET', '/passkeys', { token })).body[0];
  t.same(renamed.body, listed);
});

t.test('a new passkey is named after the authenticator model its AAGUID names, else "Passkey", as in the original', async (t) => {
  const { access_token: token } = await signUp(api);
  const named = async (aaguid: string) => {
    const authenticator = newAuthenticator();
    authenticator.aaguid = Buffer.from(aaguid.replaceAll('-', ''), 'hex');
    const created = await register(api, token, authenticator);
    t.equal(created.status, 200, created.text);
    return created.body.friendly_name;
  };
  t.equal(await named('ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4'), 'Google Password Manager');
  t.equal(await named('bada5566-a7aa-401f-bd96-45619a55120d'), '1Password');
  t.equal(await named('00000000-0000-0000-0000-000000000000'), 'Passkey', 'a zero AAGUID (attestation "none")');
  t.equal(await named('0123abcd-0000-4000-8000-000000000000'), 'Passkey', 'a model in no list');
  const listed = (await api.request('GET', '/passkeys', { token })).body.map((p: { friendly_name: string }) => p.friendly_name);
  t.same(listed, ['Google Password Manager', '1Password', 'Passkey', 'Passkey'], 'the name is stored');
});

t.test('PASSKEY_MAX_PASSKEYS_PER_USER is 10 by default, as in the original', async (t) => {
  const { access_token: token } = await signUp(api);
  for (let i = 0; i < 10; i++) t.equal((await register(api, token, newAuthenticator())).status, 200, `passkey ${i + 1}`);
  const eleventh = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  t.same(eleventh.body, { code: 422, error_code: 'too_many_passkeys', msg: 'Maximum number of passkeys reached' });
});

t.test('an authenticator already registered by another user: 422 webauthn_credential_exists', async (t) => {
  const authenticator = newAuthenticator();
  t.equal((await register(api, (await signUp(api)).access_token, authenticator)).status, 200);
  const other = await register(api, (await signUp(api)).access_token, authenticator);
  t.same(other.body, { code: 422, error_code: 'webauthn_credential_exists', msg: 'This credential is already registered' });
});

t.test('the options requests and deletions read no body, as in the original: one that is no JSON changes nothing', async (t) => {
  const session = await signUp(api);
  const token = session.access_token;
  const created = (await register(api, token, newAuthenticator())).body;
  const garbage = { raw: 'garbage{', headers: { 'content-type': 'application/json' } };
  t.equal((await api.request('POST', '/passkeys/registration/options', { token, ...garbage })).status, 200);
  t.equal((await api.request('POST', '/passkeys/authentication/options', garbage)).status, 200);
  const unknown = `/admin/users/${session.user.id}/passkeys/00000000-0000-0000-0000-000000000000`;
  t.same((await api.request('DELETE', unknown, { token: admin, ...garbage })).body, {
    code: 404,
    error_code: 'validation_failed',
    msg: 'Passkey not found',
  });
  t.equal((await api.request('DELETE', `/passkeys/${created.id}`, { token, ...garbage })).status, 204);
  // The verify requests do read theirs.
  const verify = await api.request('POST', '/passkeys/authentication/verify', garbage);
  t.same(verify.body, {
    code: 400,
    error_code: 'bad_json',
    msg: "Could not parse request body as JSON: invalid character 'g' looking for beginning of value",
  });
});

t.test('a user whose phone is not confirmed cannot sign in with a passkey: 403 phone_not_confirmed', async (t) => {
  const created = await api.request('POST', '/admin/users', {
    token: admin,
    body: { email: uniqueEmail(), email_confirm: true, phone: '15550001234' },
  });
  t.equal(created.status, 200, created.text);
  const authenticator = newAuthenticator();
  await storePasskey(api, created.body.id, authenticator);
  const refused = await signInWithPasskey(api, authenticator);
  t.same(refused.body, { code: 403, error_code: 'phone_not_confirmed', msg: 'Phone not confirmed' });
});

// ---- web3 ----

/** `date` written in the zone `offset` ("+24:00", "-00:60"), which Go's RFC 3339 reading accepts. */
function inZone(date: Date, offset: string): string {
  const sign = offset.startsWith('-') ? -1 : 1;
  const [h, m] = offset.slice(1).split(':').map(Number);
  return new Date(date.getTime() + sign * (h * 60 + m) * 60_000).toISOString().replace('Z', offset);
}

t.test("message timestamps are read as Go's time.Parse reads RFC 3339: a one-digit hour, any fraction, offsets to 24:60", async (t) => {
  const now = new Date();
  const accepted: Array<[string, MessageFields]> = [
    ['a one-digit hour', { notBefore: '2020-01-01T7:00:00Z', expirationTime: '2099-01-01T7:00:00Z' }],
    ['ten fractional digits', { issuedAt: now.toISOString().replace(/\.\d+Z$/, '.1234567891Z') }],
    ['a fraction after a comma', { issuedAt: now.toISOString().replace('.', ',') }],
    ['offset +24:00', { issuedAt: inZone(now, '+24:00') }],
    ['offset -00:60', { issuedAt: inZone(now, '-00:60') }],
  ];
  for (const [name, fields] of accepted) {
    const res = await web3(api, ethereumSignIn(fields));
    t.equal(res.status, 200, `${name}: ${res.text}`);
  }
  // The offset counts: an hour ago written at +24:00 is an hour ago, not 23 hours ahead.
  const notBefore = inZone(new Date(now.getTime() - HOUR), '+24:00');
  t.equal((await web3(api, ethereumSignIn({ notBefore, expirationTime: new Date(now.getTime() + HOUR) }))).status, 200);
  const later = inZone(new Date(now.getTime() + HOUR), '+24:00');
  const early = await web3(api, ethereumSignIn({ notBefore: later, expirationTime: new Date(now.getTime() + 2 * HOUR) }));
  t.same(early.body, { error: 'invalid_grant', error_description: 'Signed Ethereum message becomes valid in the future' });

  for (const [name, value] of [
    ['offset +25:00', inZone(now, '+25:00')],
    ['offset +00:61', inZone(now, '+00:61')],
    ['hour 24', '2026-01-01T24:00:00Z'],
    ['a lower-case z', now.toISOString().replace('Z', 'z')],
    ['a dot without digits', now.toISOString().replace(/\.\d+Z$/, '.Z')],
    ['a three-digit hour', '2026-01-01T007:00:00Z'],
  ]) {
    const res = await web3(api, ethereumSignIn({ issuedAt: value }));
    t.same(res.body, validation('siwe: Issued At is not a valid ISO8601 timestamp'), name);
  }
});

t.test("lines are trimmed of what Go's strings.TrimSpace trims: U+0085 yes, U+FEFF no", async (t) => {
  const account = ethereumAccount();
  const nel = signInMessage('Ethereum', account.address).replace('Version: 1', 'Version: 1\u0085');
  t.equal((await web3(api, { chain: 'ethereum', message: nel, signature: account.sign(nel) })).status, 200);
  const bom = `\ufeff${signInMessage('Ethereum', account.address)}`;
  const refused = await web3(api, { chain: 'ethereum', message: bom, signature: account.sign(bom) });
  t.same(refused.body, validation('siwe: domain in first line of message is not valid'));
  const sol = solanaAccount();
  const message = signInMessage('Solana', sol.address).replace('Version: 1', 'Version: 1\u2028');
  t.equal((await web3(api, { chain: 'solana', message, signature: base64Url(sol.sign(message)) })).status, 200);
});

t.test('a Solana signature with line breaks in it decodes, as Go decodes base64; padding only at the end', async (t) => {
  const sol = solanaAccount();
  const message = signInMessage('Solana', sol.address);
  const signature = base64Url(sol.sign(message)); // 86 characters
  const broken = `${signature.slice(0, 40)}\r\n${signature.slice(40)}`;
  const res = await web3(api, { chain: 'solana', message, signature: broken });
  t.equal(res.status, 200, res.text);
  const inner = await web3(api, { chain: 'solana', message, signature: `${signature.slice(0, 40)}==${signature.slice(40)}` });
  t.same(inner.body, validation('signature does not contain valid base64 characters'));
});

t.test('Ethereum signatures: v as 0/1 or 27/28, hex in capitals, a high-s twin: all recover the signer, as in the original', async (t) => {
  const account = ethereumAccount();
  const fresh = (nonce: string) => ethereumSignIn({ nonce }, account);
  const lowV = fresh('low-v');
  const v = parseInt(lowV.signature.slice(-2), 16);
  t.equal((await web3(api, { ...lowV, signature: lowV.signature.slice(0, -2) + (v - 27).toString(16).padStart(2, '0') })).status, 200);
  const upper = fresh('upper-hex');
  t.equal((await web3(api, { ...upper, signature: `0x${upper.signature.slice(2).toUpperCase()}` })).status, 200);
  const twin = fresh('high-s');
  const bytes = Buffer.from(twin.signature.slice(2), 'hex');
  const n = secp256k1.Point.CURVE().n;
  const highS = n - BigInt(`0x${bytes.subarray(32, 64).toString('hex')}`);
  const malleated = Buffer.concat([
    bytes.subarray(0, 32),
    Buffer.from(highS.toString(16).padStart(64, '0'), 'hex'),
    Buffer.from([27 + ((bytes[64] - 27) ^ 1)]), // the other recovery id
  ]);
  t.equal((await web3(api, { ...twin, signature: `0x${malleated.toString('hex')}` })).status, 200);
  const capitalX = fresh('capital-x');
  t.same(
    (await web3(api, { ...capitalX, signature: `0X${capitalX.signature.slice(2)}` })).body,
    validation('signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string'),
  );
});

t.test('the identity is the address as the message writes it: its checksum spelling is another user', async (t) => {
  const account = ethereumAccount();
  const lower = await web3(api, ethereumSignIn({}, account));
  const mixed = account.address.replace(/[a-f]/, (c) => c.toUpperCase());
  const message = signInMessage('Ethereum', mixed);
  const checksum = await web3(api, { chain: 'ethereum', message, signature: account.sign(message) });
  t.equal(checksum.status, 200, checksum.text);
  t.not(checksum.body.user.id, lower.body.user.id);
  t.equal(checksum.body.user.identities[0].id, `web3:ethereum:${mixed}`);
  t.equal(checksum.body.user.user_metadata.custom_claims.address, mixed);
});

t.test('no Nonce line, and a Chain ID of "+1": accepted, the network stored as written', async (t) => {
  const res = await web3(api, ethereumSignIn({ nonce: null, chainId: '+1' }));
  t.equal(res.status, 200, res.text);
  t.equal(res.body.user.user_metadata.custom_claims.network, '+1');
  t.equal(res.body.user.email, '');
  t.notOk(res.body.user.identities[0].identity_data.email, 'no email in the identity');
});
