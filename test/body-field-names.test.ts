// Request bodies' member names are matched to fields as the original's JSON decoder matches them
// (docs/api.md#conventions-for-every-endpoint): exactly, else ignoring case, a later member of a field replacing an earlier
// one; a later null replaces it only in a field Go would set to nil (a pointer, map or slice), not in a string.
// A client written against the original that sends `Email` or `PASSWORD` is served, not answered as if it
// had sent nothing.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { signUp, uniqueEmail } from './helpers/accounts.js';
import { oauthServerEnv, registerClient } from './helpers/oauth-server.js';

const api = await startTestService(oauthServerEnv());
t.teardown(() => api.stop());
const admin = await adminToken('service_role');
const password = 'Secret-password-1';

t.test('sign-up and the password grant read fields sent in another case', async (t) => {
  const email = uniqueEmail('cased');
  const signedUp = await api.request('POST', '/signup', { body: { Email: email, PASSWORD: password, Data: { plan: 'pro' } } });
  t.equal(signedUp.status, 200, signedUp.text);
  t.equal(signedUp.body.user.email, email);
  t.equal(signedUp.body.user.user_metadata.plan, 'pro');
  const signedIn = await api.request('POST', '/token?grant_type=password', { body: { EMAIL: email, Password: password } });
  t.equal(signedIn.status, 200, signedIn.text);
  t.equal(signedIn.body.user.id, signedUp.body.user.id);
  // ſ folds to s and the Kelvin sign to k, as Unicode case folding (and Go's decoder) has them.
  const folded = await api.request('POST', '/token?grant_type=password', { body: { email, paſſword: password } });
  t.equal(folded.status, 200, folded.text);
});

t.test('a later member of a field replaces an earlier one, a null one not a string; a wrong type is named as Go names it', async (t) => {
  const first = uniqueEmail('first');
  const last = uniqueEmail('last');
  const later = await api.request('POST', '/signup', { body: { email: first, Email: last, password } });
  t.equal(later.status, 200, later.text);
  t.equal(later.body.user.email, last);
  const kept = uniqueEmail('kept');
  const nulled = await api.request('POST', '/signup', { body: { email: kept, EMAIL: null, password } });
  t.equal(nulled.status, 200, nulled.text);
  t.equal(nulled.body.user.email, kept);
  const mistyped = await api.request('POST', '/signup', { body: { Email: 42, password } });
  t.strictSame(
    [mistyped.status, mistyped.body],
    [
      400,
      {
        code: 400,
        error_code: 'bad_json',
        msg: 'Could not parse request body as JSON: json: cannot unmarshal number into Go struct field SignupParams.email of type string',
      },
    ],
  );
});

t.test('PUT /user: a later null empties the password and data, which the original decodes into a *string and a map', async (t) => {
  const email = uniqueEmail('nulled-later');
  const session = await signUp(api, email, password);
  const other = 'Other-password-2';
  const res = await api.request('PUT', '/user', {
    token: session.access_token,
    body: { password: other, Password: null, data: { plan: 'pro' }, DATA: null },
  });
  t.equal(res.status, 200, res.text);
  t.notOk('plan' in res.body.user_metadata, 'no metadata written');
  const signIn = (secret: string) => api.request('POST', '/token?grant_type=password', { body: { email, password: secret } });
  t.equal((await signIn(password)).status, 200, 'the password is unchanged');
  t.equal((await signIn(other)).status, 400, 'the nulled password was not set');
});

t.test('PUT /admin/users: a later null empties pointer and map fields, and leaves a string field as sent', async (t) => {
  const email = uniqueEmail('admin-nulled');
  const created = await api.request('POST', '/admin/users', { token: admin, body: { email, password, email_confirm: true } });
  t.equal(created.status, 200, created.text);
  const moved = uniqueEmail('admin-moved');
  const other = 'Other-password-2';
  const res = await api.request('PUT', `/admin/users/${created.body.id}`, {
    token: admin,
    // email is a Go string (null leaves it), password a *string and user_metadata a map (null empties them).
    body: { email: moved, Email: null, password: other, PASSWORD: null, user_metadata: { team: 'b' }, User_Metadata: null },
  });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.email, moved, 'the address was changed: null does not undo a string');
  t.notOk('team' in res.body.user_metadata, 'no metadata written');
  const signIn = (secret: string) => api.request('POST', '/token?grant_type=password', { body: { email: moved, password: secret } });
  t.equal((await signIn(password)).status, 200, 'the password is unchanged');
  t.equal((await signIn(other)).status, 400, 'the nulled password was not set');
});

t.test('admin routes: a user created with cased fields', async (t) => {
  const email = uniqueEmail('admin');
  const res = await api.request('POST', '/admin/users', {
    token: admin,
    body: { Email: email, Email_Confirm: true, User_Metadata: { team: 'a' } },
  });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.email, email);
  t.ok(res.body.email_confirmed_at, 'email_confirm was read');
  t.equal(res.body.user_metadata.team, 'a');
});

t.test('the OAuth server: a client registered and a token request sent with cased fields', async (t) => {
  const res = await api.request('POST', '/admin/oauth/clients', {
    token: admin,
    body: { Client_Name: 'Cased', Redirect_URIs: ['https://cased.example/cb'] },
  });
  t.equal(res.status, 201, res.text);
  t.equal(res.body.client_name, 'Cased');
  t.strictSame(res.body.redirect_uris, ['https://cased.example/cb']);

  const client = await registerClient(api, { token_endpoint_auth_method: 'client_secret_post' });
  const token = await api.request('POST', '/oauth/token', {
    body: { Grant_Type: 'refresh_token', Refresh_Token: 'not-a-token', Client_ID: client.client_id, Client_Secret: client.client_secret },
  });
  // The grant type, the credentials and the token were all read: the refusal is about the token itself.
  t.strictSame([token.status, token.body.error_code], [400, 'refresh_token_not_found'], token.text);
});

t.test('a body of null is an empty one, as the original decodes it; other non-objects stay bad_json', async (t) => {
  const email = uniqueEmail('null-body');
  const created = await api.request('POST', '/admin/users', { token: admin, body: { email, password } });
  t.equal(created.status, 200, created.text);
  const nulled = await api.request('PUT', `/admin/users/${created.body.id}`, {
    token: admin,
    raw: 'null',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(nulled.status, 200, nulled.text);
  t.equal(nulled.body.email, email, 'nothing changed');
  const registered = await api.request('POST', '/admin/oauth/clients', {
    token: admin,
    raw: 'null',
    headers: { 'content-type': 'application/json' },
  });
  t.strictSame([registered.status, registered.body.msg], [400, '400: redirect_uris is required'], 'checked as an empty registration');
  for (const raw of ['[]', '"null"', '0']) {
    const res = await api.request('PUT', `/admin/users/${created.body.id}`, {
      token: admin,
      raw,
      headers: { 'content-type': 'application/json' },
    });
    t.strictSame([res.status, res.body.error_code], [400, 'bad_json'], raw);
  }
});
