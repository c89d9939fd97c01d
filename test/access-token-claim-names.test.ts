// A bearer token's claims are read as the original reads them: golang-jwt v5 decodes the payload into its
// claims struct with Go's encoding/json, which matches a claim's name ignoring case (the last spelling in
// the payload staying) and reads exp, nbf and iat through a json.Number, which takes a string holding a
// number. Tokens an operator's own tools mint this way must work as they did, and expire as they did
// (docs/tokens-and-sessions.md#verification).
import t from 'tap';
import { createHmac, randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestService, JWT_SECRET } from './helpers/server.js';
import { signIn, signUp } from './helpers/accounts.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());

/** An HS256 token whose payload is these members in this order, repeated names included. */
function rawToken(members: Array<[string, unknown]>): string {
  const payload = `{${members.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`).join(',')}}`;
  const input = `${Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')}.${Buffer.from(payload).toString('base64url')}`;
  return `${input}.${createHmac('sha256', JWT_SECRET).update(input).digest('base64url')}`;
}

const now = () => Math.floor(Date.now() / 1000);
const BAD_JWT = (reason: string) => ({
  code: 403,
  error_code: 'bad_jwt',
  msg: `invalid JWT: unable to parse or verify signature, ${reason}`,
});

const alice = await signUp(api);
const bob = await signUp(api);

/** Alice's own claims, each renamed as `rename` says (to `dropped`, a name no field has: the claim is gone), then `extra` appended. */
function aliceToken(rename: Record<string, string>, extra: Array<[string, unknown]> = []): string {
  const members = Object.entries(decodeJwt(alice.access_token)).map(([name, value]): [string, unknown] => [rename[name] ?? name, value]);
  return rawToken([...members, ...extra]);
}

t.test('claim names in another case fill the claims: SUB names the user, Session_Id the session', async (t) => {
  const token = aliceToken({ sub: 'SUB', session_id: 'Session_Id', aud: 'Aud', exp: 'EXP', role: 'ROLE' });
  const res = await api.request('GET', '/user', { token });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.id, alice.user.id);
  const longS = await api.request('GET', '/user', { token: aliceToken({ sub: 'ſub' }) });
  t.equal(longS.body.id, alice.user.id, 'ſ is s, as Go folds it');
});

t.test('when a claim is spelled more than once, the last spelling counts', async (t) => {
  const sessionless = (first: string, last: string) =>
    rawToken([
      ['sub', first],
      ['Sub', last],
      ['aud', 'authenticated'],
      ['role', 'authenticated'],
      ['exp', now() + 600],
    ]);
  t.equal((await api.request('GET', '/user', { token: sessionless(bob.user.id, alice.user.id) })).body.id, alice.user.id);
  t.equal((await api.request('GET', '/user', { token: sessionless(alice.user.id, bob.user.id) })).body.id, bob.user.id);

  const unknown = randomUUID();
  for (const later of ['session_id', 'Session_ID']) {
    const res = await api.request('GET', '/user', { token: aliceToken({ session_id: 'SESSION_ID' }, [[later, unknown]]) });
    t.strictSame([res.status, res.body.error_code], [403, 'session_not_found'], `a later ${later} of no session is the one looked up`);
  }
  const earlier = rawToken([
    ['session_id', unknown],
    ...Object.entries(decodeJwt(alice.access_token)).map(([n, v]): [string, unknown] => [n === 'session_id' ? 'SESSION_ID' : n, v]),
  ]);
  t.equal((await api.request('GET', '/user', { token: earlier })).status, 200, 'an earlier session_id of no session is replaced');
  const cleared = aliceToken({}, [['SUB', null]]);
  t.equal((await api.request('GET', '/user', { token: cleared })).body.id, alice.user.id, 'a later null leaves a string claim as it was');
  const wrongType = rawToken([
    ['SUB', 7],
    ['sub', alice.user.id],
    ['aud', 'authenticated'],
  ]);
  t.strictSame(
    (await api.request('GET', '/user', { token: wrongType })).body,
    BAD_JWT(
      'token is malformed: could not JSON decode claim: json: cannot unmarshal number into Go struct field AccessTokenClaims.sub of type string',
    ),
    'an earlier spelling of the wrong type is refused, named by the field',
  );
});

t.test('an EXP in the past expires the token; a later null exp clears an earlier one', async (t) => {
  const expired = aliceToken({ exp: 'dropped' }, [['EXP', now() - 60]]);
  t.strictSame((await api.request('GET', '/user', { token: expired })).body, BAD_JWT('token has invalid claims: token is expired'));
  const onlyUpper = aliceToken({ exp: 'Exp' });
  t.equal((await api.request('GET', '/user', { token: onlyUpper })).status, 200, 'an Exp in the future');
  const pastThenNull = rawToken([
    ...Object.entries(decodeJwt(alice.access_token)).map(([n, v]): [string, unknown] => [n, n === 'exp' ? now() - 60 : v]),
    ['EXP', null],
  ]);
  t.equal((await api.request('GET', '/user', { token: pastThenNull })).status, 200, 'golang-jwt holds no expiry after the null');
  const early = aliceToken({}, [['NBF', now() + 600]]);
  t.strictSame((await api.request('GET', '/user', { token: early })).body, BAD_JWT('token has invalid claims: token is not valid yet'));
  const both = aliceToken({}, [
    ['Nbf', now() + 600],
    ['eXp', now() - 60],
  ]);
  t.strictSame(
    (await api.request('GET', '/user', { token: both })).body,
    BAD_JWT('token has invalid claims: token is expired, token is not valid yet'),
    'both named, as golang-jwt joins them',
  );
});

t.test('exp, nbf and iat may be strings holding a number, as a json.Number takes them', async (t) => {
  const withExp = (exp: unknown) => aliceToken({ exp: 'dropped' }, [['exp', exp]]);
  const future = await api.request('GET', '/user', { token: withExp(String(now() + 600)) });
  t.equal(future.status, 200, future.text);
  t.equal(future.body.id, alice.user.id);
  t.strictSame(
    (await api.request('GET', '/user', { token: withExp(String(now() - 60)) })).body,
    BAD_JWT('token has invalid claims: token is expired'),
  );
  t.equal((await api.request('GET', '/user', { token: aliceToken({}, [['iat', String(now())]]) })).status, 200, 'iat a string');
  t.strictSame(
    (await api.request('GET', '/user', { token: aliceToken({}, [['nbf', String(now() + 600)]]) })).body,
    BAD_JWT('token has invalid claims: token is not valid yet'),
  );
  t.strictSame(
    (await api.request('GET', '/user', { token: withExp('soon') })).body,
    BAD_JWT(
      'token is malformed: could not JSON decode claim: could not parse NumericData: json: invalid number literal, trying to unmarshal "\\"soon\\"" into Number',
    ),
    'a string of no number',
  );
  t.strictSame(
    (await api.request('GET', '/user', { token: withExp(` ${now() + 600}`) })).body.msg,
    `invalid JWT: unable to parse or verify signature, token is malformed: could not JSON decode claim: could not parse NumericData: json: invalid number literal, trying to unmarshal "\\" ${now() + 600}\\"" into Number`,
    'a space is no part of a JSON number',
  );
  t.strictSame(
    (await api.request('GET', '/user', { token: withExp(true) })).body,
    BAD_JWT(
      'token is malformed: could not JSON decode claim: could not parse NumericData: json: cannot unmarshal bool into Go value of type json.Number',
    ),
  );
  t.strictSame(
    (await api.request('GET', '/user', { token: withExp('1e400') })).body,
    BAD_JWT(
      'token is malformed: could not JSON decode claim: could not convert json number value to float: strconv.ParseFloat: parsing "1e400": value out of range',
    ),
  );
});

t.test('an admin key whose role is spelled ROLE is an admin key', async (t) => {
  const key = rawToken([
    ['ROLE', 'service_role'],
    ['Exp', String(now() + 600)],
  ]);
  t.equal((await api.request('GET', '/admin/users', { token: key })).status, 200);
});

t.test('logout signs out the session named by Session_Id, and only that one', async (t) => {
  const carol = await signUp(api);
  // A second session: a token naming none would sign the user out of both (the original's rule).
  const other = await signIn(api, carol.user.email);
  const claims = decodeJwt(carol.access_token);
  const token = rawToken(Object.entries(claims).map(([n, v]): [string, unknown] => [n === 'session_id' ? 'Session_Id' : n, v]));
  t.equal((await api.request('POST', '/logout?scope=local', { token })).status, 204);
  const after = await api.request('GET', '/user', { token: carol.access_token });
  t.strictSame([after.status, after.body.error_code], [403, 'session_not_found'], 'the session is gone');
  t.equal((await api.request('GET', '/user', { token: other.access_token })).status, 200, 'the other session is not');
});
