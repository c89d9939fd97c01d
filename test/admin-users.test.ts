// The admin users API (REFERENCE §1.5, §2.14, §14.3, §14.4): the admin-role check on every route, create
// (both routes), read, list with pagination headers and filter, update, hard and soft delete, and the
// audit rows each action leaves.
import t from 'tap';
import bcrypt from 'bcryptjs';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { holdUserLock, behindDeletion } from './helpers/row-lock.js';

const api = await startTestService();
t.teardown(() => api.stop());
const admin = await adminToken('service_role');
/** A time as the original's JSON writes it: RFC 3339 in UTC, the stored fraction without trailing zeros. */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{0,5}[1-9])?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const create = (body: unknown) => api.request('POST', '/admin/users', { token: admin, body });
const signIn = (email: string, password: string) => api.request('POST', '/token?grant_type=password', { body: { email, password } });

t.test('every admin route: 401 without a token, 403 bad_jwt for a forged one, 403 not_admin for a user role', async (t) => {
  const userToken = await adminToken('authenticated', { sub: crypto.randomUUID() });
  const id = crypto.randomUUID();
  const routes: Array<[string, string]> = [
    ['GET', '/admin/users'],
    ['POST', '/admin/users'],
    ['GET', `/admin/users/${id}`],
    ['POST', `/admin/users/${id}`],
    ['PUT', `/admin/users/${id}`],
    ['DELETE', `/admin/users/${id}`],
    ['POST', '/admin/generate_link'],
    ['POST', '/invite'],
  ];
  for (const [method, path] of routes) {
    const body = method === 'GET' ? undefined : {};
    const none = await api.request(method, path, { body });
    t.strictSame(
      [none.status, none.body],
      [401, { code: 401, error_code: 'no_authorization', msg: 'This endpoint requires a valid Bearer token' }],
      `${method} ${path} no token`,
    );
    const user = await api.request(method, path, { body, token: userToken });
    t.strictSame(
      [user.status, user.body],
      [403, { code: 403, error_code: 'not_admin', msg: 'User not allowed' }],
      `${method} ${path} user role`,
    );
    const forged = await api.request(method, path, { body, token: admin.slice(0, -4) + 'AAAA' });
    t.equal(forged.status, 403);
    t.equal(forged.body.error_code, 'bad_jwt');
  }
  const platform = await api.request('GET', '/admin/users', { token: await adminToken('supabase_admin') });
  t.equal(platform.status, 200, 'supabase_admin is an admin role by default');
});

t.test('a user whose role is an admin role may call the admin API until their session ends', async (t) => {
  await create({ email: 'operator@example.com', password: 'operator-pass', email_confirm: true, role: 'service_role' });
  const session = await signIn('operator@example.com', 'operator-pass');
  t.equal(session.status, 200);
  const token = session.body.access_token;
  t.equal((await api.request('GET', '/admin/users?per_page=1', { token })).status, 200);
  await api.db.query('delete from sessions where user_id = $1', [session.body.user.id]);
  const ended = await api.request('GET', '/admin/users', { token });
  t.strictSame(
    [ended.status, ended.body],
    [403, { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' }],
    "a signed-out session: the original's answer",
  );
  await api.db.query('delete from users where id = $1', [session.body.user.id]);
  const gone = await api.request('GET', '/admin/users', { token });
  t.strictSame(
    [gone.status, gone.body],
    [403, { code: 403, error_code: 'user_not_found', msg: 'User from sub claim in JWT does not exist' }],
    'a deleted user, before its session',
  );
  // A token naming a session but no user is refused as the original refuses it: no sub to load.
  const noSub = await adminToken('service_role', { session_id: crypto.randomUUID() });
  t.strictSame((await api.request('GET', '/admin/users', { token: noSub })).body.error_code, 'bad_jwt');
});

t.test("a ban ends an admin-role user's admin access at once, as it ends their own", async (t) => {
  const created = await create({
    email: 'rogue-operator@example.com',
    password: 'operator-pass',
    email_confirm: true,
    role: 'service_role',
  });
  const session = await signIn('rogue-operator@example.com', 'operator-pass');
  const token = session.body.access_token;
  t.equal((await api.request('GET', '/admin/users?per_page=1', { token })).status, 200, 'an admin before the ban');
  const ban = await api.request('PUT', `/admin/users/${created.body.id}`, { token: admin, body: { ban_duration: '24h' } });
  t.equal(ban.status, 200, ban.text);
  const banned = await api.request('GET', '/admin/users', { token });
  t.strictSame([banned.status, banned.body], [403, { code: 403, error_code: 'user_banned', msg: 'User is banned' }]);
  const selfUnban = await api.request('PUT', `/admin/users/${created.body.id}`, { token, body: { ban_duration: 'none' } });
  t.equal(selfUnban.status, 403, 'nor may they lift their own ban');
  t.ok((await api.db.query('select banned_until from users where id = $1', [created.body.id])).rows[0].banned_until, 'still banned');
});

t.test('POST /admin/users creates a confirmed user who can sign in; answers 200 with the whole user', async (t) => {
  const res = await create({
    email: 'Ada@Example.com',
    password: 'correct horse',
    email_confirm: true,
    role: 'editor',
    user_metadata: { full_name: 'Ada Lovelace' },
    app_metadata: { plan: 'pro' },
  });
  t.equal(res.status, 200);
  const u = res.body;
  t.match(u, { id: UUID, created_at: ISO, updated_at: ISO, email_confirmed_at: ISO, confirmed_at: ISO });
  t.strictSame(
    { ...u, id: 'ID', created_at: 'T', updated_at: 'T', email_confirmed_at: 'T', confirmed_at: 'T', identities: u.identities.length },
    {
      id: 'ID',
      aud: 'authenticated',
      role: 'editor',
      email: 'ada@example.com',
      phone: '',
      email_confirmed_at: 'T',
      confirmed_at: 'T',
      app_metadata: { provider: 'email', providers: ['email'], plan: 'pro' },
      user_metadata: { full_name: 'Ada Lovelace', email_verified: true },
      identities: 1,
      created_at: 'T',
      updated_at: 'T',
      is_anonymous: false,
    },
  );
  t.match(u.identities[0], {
    provider: 'email',
    id: u.id,
    user_id: u.id,
    identity_data: { sub: u.id, email: 'ada@example.com', email_verified: true },
  });
  const login = await signIn('ada@example.com', 'correct horse');
  t.equal(login.status, 200);
  t.equal(login.body.user.role, 'editor');
});

t.test('email and phone together: both identities, providers in order; no password means no password sign-in', async (t) => {
  const res = await create({ email: 'both@example.com', phone: '+1 415 555 2671', phone_confirm: true });
  t.equal(res.status, 200);
  t.strictSame(res.body.app_metadata, { provider: 'email', providers: ['email', 'phone'] });
  t.equal(res.body.phone, '14155552671');
  t.match(res.body, { phone_confirmed_at: ISO });
  t.notOk('email_confirmed_at' in res.body);
  t.strictSame(res.body.identities.map((i: any) => i.provider).sort(), ['email', 'phone']);
  const { rows } = await api.db.query('select encrypted_password from users where id = $1', [res.body.id]);
  t.equal(rows[0].encrypted_password, null);
});

t.test('create refusals, each with the original status, code and message, and nothing written', async (t) => {
  const holder = await create({ email: 'taken@example.com', phone: '+14155550100' });
  // Another user's GitHub identity holds this one: taken too, as the original's duplicate check counts it.
  await api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ('gh-taken', $1, $2, 'github')`, [
    holder.body.id,
    { sub: 'gh-taken', email: 'Identity-Taken@example.com' },
  ]);
  const cases: Array<[unknown, number, string, string]> = [
    [{}, 400, 'validation_failed', 'Cannot create a user without either an email or phone'],
    [{ email: 'TAKEN@example.com' }, 422, 'email_exists', 'A user with this email address has already been registered'],
    [{ email: 'identity-taken@example.com' }, 422, 'email_exists', 'A user with this email address has already been registered'],
    [{ phone: '14155550100' }, 422, 'phone_exists', 'Phone number already registered by another user'],
    [
      { email: 'x1@example.com', password: 'secret1', password_hash: '$2a$10$abc' },
      400,
      'validation_failed',
      'Only a password or a password hash should be provided',
    ],
    [{ email: 'x2@example.com', id: 'not-a-uuid' }, 400, 'validation_failed', 'ID must conform to the uuid v4 format'],
    [{ email: 'x3@example.com', id: '00000000-0000-0000-0000-000000000000' }, 400, 'validation_failed', 'ID cannot be a nil uuid'],
    [
      { email: 'x4@example.com', password_hash: 'md5$abc' },
      400,
      'validation_failed',
      'Invalid password hash format: expected an argon2, bcrypt or Firebase scrypt hash',
    ],
    // Within the original's ceilings, but each sign-in against them would hold a crypto thread for half a
    // minute and a gigabyte: refused here, as a hash no sign-in could verify in time.
    ...[
      '$argon2id$v=19$m=1048576,t=20,p=16$AQEBAQEBAQEBAQEBAQEBAQ$AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI',
      '$argon2id$v=19$m=262145,t=1,p=1$AQEBAQEBAQEBAQEBAQEBAQ$AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI',
      '$argon2id$v=19$m=262144,t=5,p=1$AQEBAQEBAQEBAQEBAQEBAQ$AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI',
      '$fbscrypt$v=1,n=22,r=2,p=16,ss=Bw==,sk=AQID$AQID$AQID',
      '$fbscrypt$v=1,n=20,r=2,p=3,ss=Bw==,sk=AQID$AQID$AQID',
    ].map((hash, i): [unknown, number, string, string] => [
      { email: `x4-${i}@example.com`, password_hash: hash },
      400,
      'validation_failed',
      'Invalid password hash format: expected an argon2, bcrypt or Firebase scrypt hash',
    ]),
    [
      { email: 'x5@example.com', ban_duration: '10' },
      400,
      'validation_failed',
      'invalid format for ban duration: time: missing unit in duration "10"',
    ],
    [
      { email: 'x6@example.com', ban_duration: '3days' },
      400,
      'validation_failed',
      'invalid format for ban duration: time: unknown unit "days" in duration "3days"',
    ],
    [{ email: 'not an email' }, 400, 'validation_failed', 'Unable to validate email address: invalid format'],
    [{ phone: '12' }, 400, 'validation_failed', 'Invalid phone number format (E.164 required)'],
    [
      { email: 'x7@example.com', user_metadata: 'nope' },
      400,
      'bad_json',
      'Could not parse request body as JSON: json: cannot unmarshal string into Go struct field AdminUserParams.user_metadata of type map[string]interface {}',
    ],
  ];
  for (const [body, status, code, msg] of cases) {
    const res = await create(body);
    t.strictSame([res.status, res.body], [status, { code: status, error_code: code, msg }], JSON.stringify(body));
  }
  const { rows } = await api.db.query(`select count(*)::int as n from users where email like 'x%@example.com'`);
  t.equal(rows[0].n, 0);
});

t.test('POST /admin/users/{user_id} creates the user with that id; the id taken is a 422', async (t) => {
  const id = crypto.randomUUID();
  const res = await api.request('POST', `/admin/users/${id}`, { token: admin, body: { email: 'byid@example.com' } });
  t.equal(res.status, 200);
  t.equal(res.body.id, id);
  const again = await api.request('POST', `/admin/users/${id}`, { token: admin, body: { email: 'byid2@example.com' } });
  t.strictSame(
    [again.status, again.body],
    [422, { code: 422, error_code: 'user_already_exists', msg: 'A user with this ID already exists' }],
  );
});

t.test('password_hash imports bcrypt and argon2 hashes that then verify at sign-in (and are upgraded)', async (t) => {
  const bcryptHash = bcrypt.hashSync('imported-bcrypt', 4);
  const b = await create({ email: 'bcrypt@example.com', password_hash: bcryptHash, email_confirm: true });
  t.equal(b.status, 200);
  t.equal((await signIn('bcrypt@example.com', 'imported-bcrypt')).status, 200);
  t.equal((await signIn('bcrypt@example.com', 'wrong')).status, 400);
  const { rows } = await api.db.query('select encrypted_password from users where id = $1', [b.body.id]);
  t.match(rows[0].encrypted_password, /^\$argon2id\$/, 'rehashed to argon2id on sign-in');
  const argon = await import('argon2');
  const argonHash = await argon.hash('imported-argon', { type: argon.argon2id, memoryCost: 1024, timeCost: 1 });
  const a = await create({ email: 'argon@example.com', password_hash: argonHash, email_confirm: true });
  t.equal(a.status, 200);
  t.equal((await signIn('argon@example.com', 'imported-argon')).status, 200);
});

t.test('GET /admin/users/{user_id}: the user with identities; bad and unknown ids are 404s', async (t) => {
  const made = await create({ email: 'reader@example.com' });
  const res = await api.request('GET', `/admin/users/${made.body.id}`, { token: admin });
  t.equal(res.status, 200);
  t.strictSame(res.body, made.body);
  const bad = await api.request('GET', '/admin/users/nope', { token: admin });
  t.strictSame([bad.status, bad.body], [404, { code: 404, error_code: 'validation_failed', msg: 'user_id must be an UUID' }]);
  const missing = await api.request('GET', `/admin/users/${crypto.randomUUID()}`, { token: admin });
  t.strictSame([missing.status, missing.body], [404, { code: 404, error_code: 'user_not_found', msg: 'User not found' }]);
});

t.test("admin ids in every spelling the original's UUID reading takes, stored and answered canonical", async (t) => {
  const id = crypto.randomUUID();
  const bare = id.replace(/-/g, '');
  // A custom id on create: braces, upper case; the user is stored under the canonical form.
  const made = await create({ email: 'spelled@example.com', id: `{${id.toUpperCase()}}` });
  t.strictSame([made.status, made.body.id], [200, id]);
  const stored = await api.db.query('select id::text from users where email = $1', ['spelled@example.com']);
  t.equal(stored.rows[0].id, id);
  // Another id than the first (its first digit changed; 'a' would be no change for one id in sixteen).
  const first = id.startsWith('a') ? 'b' : 'a';
  const urnMade = await create({ email: 'spelled-urn@example.com', id: `urn:uuid:${first}${bare.slice(1)}` });
  t.equal(urnMade.body.id, `${first}${id.slice(1)}`);
  const nilBare = await create({ email: 'spelled-nil@example.com', id: '0'.repeat(32) });
  t.strictSame([nilBare.status, nilBare.body.msg], [400, 'ID cannot be a nil uuid']);
  const wrapped = await create({ email: 'spelled-bad@example.com', id: `(${id})` });
  t.strictSame([wrapped.status, wrapped.body.msg], [400, 'ID must conform to the uuid v4 format']);

  for (const spelling of [bare, bare.toUpperCase(), `{${id}}`, `{${bare}}`, `urn:uuid:${id}`, `urn:uuid:${bare}`]) {
    const res = await api.request('GET', `/admin/users/${encodeURIComponent(spelling)}`, { token: admin });
    t.strictSame([res.status, res.body.id], [200, id], spelling);
  }
  for (const spelling of [`[${id}]`, `urn:UUID:${id}`, `${bare}0`, `{${id}`]) {
    const res = await api.request('GET', `/admin/users/${encodeURIComponent(spelling)}`, { token: admin });
    t.strictSame([res.status, res.body.msg], [404, 'user_id must be an UUID'], spelling);
  }

  const factor = await api.db.query(
    `insert into mfa_factors (user_id, friendly_name, factor_type, status) values ($1, 'app', 'totp', 'verified') returning id::text`,
    [id],
  );
  const factorId: string = factor.rows[0].id;
  const renamed = await api.request('PUT', `/admin/users/urn:uuid:${bare}/factors/${encodeURIComponent(`{${factorId.toUpperCase()}}`)}`, {
    token: admin,
    body: { friendly_name: 'renamed' },
  });
  t.strictSame([renamed.status, renamed.body.id, renamed.body.friendly_name], [200, factorId, 'renamed']);
  const badFactor = await api.request('PUT', `/admin/users/${id}/factors/x${factorId}`, { token: admin, body: {} });
  t.strictSame([badFactor.status, badFactor.body.msg], [404, 'factor_id must be an UUID']);
  const dropped = await api.request('DELETE', `/admin/users/${bare}/factors/${factorId.replace(/-/g, '')}`, { token: admin, body: {} });
  t.equal(dropped.status, 200);
  const left = await api.db.query('select count(*)::int as n from mfa_factors where user_id = $1', [id]);
  t.equal(left.rows[0].n, 0);

  const deleted = await api.request('DELETE', `/admin/users/${encodeURIComponent(`{${bare}}`)}`, { token: admin, body: {} });
  t.equal(deleted.status, 200);
  const gone = await api.db.query('select count(*)::int as n from users where id = $1', [id]);
  t.equal(gone.rows[0].n, 0);
});

t.test('PUT /admin/users/{user_id} changes only what the body names', async (t) => {
  const made = await create({
    email: 'editme@example.com',
    password: 'first-pass',
    email_confirm: true,
    app_metadata: { plan: 'free', trial: true },
    user_metadata: { full_name: 'Ed' },
  });
  const id = made.body.id;
  const put = (body: unknown) => api.request('PUT', `/admin/users/${id}`, { token: admin, body });
  const res = await put({ role: 'manager', app_metadata: { plan: 'pro', trial: null }, user_metadata: { nickname: 'eddie' } });
  t.equal(res.status, 200);
  t.equal(res.body.role, 'manager');
  t.strictSame(res.body.app_metadata, { provider: 'email', providers: ['email'], plan: 'pro' }, 'merged; null removes a key');
  t.strictSame(res.body.user_metadata, { full_name: 'Ed', email_verified: true, nickname: 'eddie' });
  t.equal(res.body.email, 'editme@example.com');

  const weak = await put({ password: '123' });
  t.strictSame(
    [weak.status, weak.body],
    [
      422,
      { code: 422, error_code: 'weak_password', msg: 'Password should be at least 6 characters.', weak_password: { reasons: ['length'] } },
    ],
  );
  t.equal((await put({ password: 'second-pass' })).status, 200);
  t.equal((await signIn('editme@example.com', 'first-pass')).status, 400);
  t.equal((await signIn('editme@example.com', 'second-pass')).status, 200);

  await create({ email: 'other@example.com' });
  const dup = await put({ email: 'other@example.com' });
  t.strictSame(
    [dup.status, dup.body],
    [422, { code: 422, error_code: 'email_exists', msg: 'A user with this email address has already been registered' }],
  );
  const moved = await put({ email: 'Moved@Example.com', email_confirm: true });
  t.equal(moved.status, 200);
  t.equal(moved.body.email, 'moved@example.com');
  t.match(moved.body.identities[0].identity_data, { email: 'moved@example.com', email_verified: true });
  t.equal((await signIn('moved@example.com', 'second-pass')).status, 200);
  const badBan = await put({ ban_duration: 'forever' });
  t.strictSame(
    [badBan.status, badBan.body],
    [400, { code: 400, error_code: 'validation_failed', msg: 'invalid format for ban duration: time: invalid duration "forever"' }],
  );
  const missing = await api.request('PUT', `/admin/users/${crypto.randomUUID()}`, { token: admin, body: { role: 'x' } });
  t.equal(missing.status, 404);
  t.equal(missing.body.error_code, 'user_not_found');
});

t.test('PUT /admin/users/{user_id}: the edges the original reads as Go does', async (t) => {
  const made = await create({ email: 'edges@example.com', password: 'edge-pass', email_confirm: true });
  t.equal(made.status, 200, made.text);
  const put = (id: string, body: unknown) => api.request('PUT', `/admin/users/${id}`, { token: admin, body });
  // An SSO user may be given an address a password account holds: the unique index leaves SSO users out.
  const sso = await create({ email: 'sso-edge@corp.example', email_confirm: true });
  await api.db.query('update users set is_sso_user = true where id = $1', [sso.body.id]);
  const shared = await put(sso.body.id, { email: 'edges@example.com' });
  t.strictSame([shared.status, shared.body.email], [200, 'edges@example.com'], shared.text);
  // `__proto__` is a metadata key like any other (a Go map's).
  const proto = await put(made.body.id, { app_metadata: JSON.parse('{"__proto__": {"x": 1}, "plan": "pro"}') });
  t.equal(proto.status, 200, proto.text);
  t.strictSame(Object.getOwnPropertyDescriptor(proto.body.app_metadata, '__proto__')?.value, { x: 1 });
  const stored = await api.db.query(`select raw_app_meta_data->'__proto__' as p from users where id = $1`, [made.body.id]);
  t.strictSame(stored.rows[0].p, { x: 1 });
  // A signed zero is a duration of zero to Go: the ban is lifted.
  t.equal((await put(made.body.id, { ban_duration: '1h' })).status, 200);
  const unbanned = await put(made.body.id, { ban_duration: '-0' });
  t.equal(unbanned.status, 200, unbanned.text);
  t.notOk(unbanned.body.banned_until, 'no longer banned');
  const far = await api.request('GET', '/admin/users?page=99999999999999999999', { token: admin });
  t.strictSame(
    [far.status, far.body.msg],
    [400, 'Bad Pagination Parameters: strconv.ParseUint: parsing "99999999999999999999": value out of range'],
  );
});

t.test('PUT /admin/users/{user_id} with a password ends every session and voids pending links, as the original', async (t) => {
  const made = await create({ email: 'taken-back@example.com', password: 'old-pass-1', email_confirm: true });
  const id = made.body.id;
  const session = await signIn('taken-back@example.com', 'old-pass-1');
  t.equal(session.status, 200);
  const link = await api.request('POST', '/admin/generate_link', {
    token: admin,
    body: { type: 'recovery', email: 'taken-back@example.com' },
  });
  t.equal(link.status, 200);
  const count = async (table: string) =>
    (await api.db.query(`select count(*)::int as n from ${table} where user_id = $1`, [id])).rows[0].n as number;
  t.ok((await count('one_time_tokens')) > 0, 'a recovery link is pending');

  t.equal((await api.request('PUT', `/admin/users/${id}`, { token: admin, body: { user_metadata: { a: 1 } } })).status, 200);
  t.equal(await count('sessions'), 1, 'another change leaves the session alone');

  t.equal((await api.request('PUT', `/admin/users/${id}`, { token: admin, body: { password: 'new-pass-1' } })).status, 200);
  t.equal(await count('sessions'), 0, 'every session ended');
  t.equal(await count('one_time_tokens'), 0, 'the recovery link is void');
  const sent = await api.db.query('select recovery_sent_at, confirmation_sent_at from users where id = $1', [id]);
  t.strictSame(sent.rows[0], { recovery_sent_at: null, confirmation_sent_at: null }, 'and when it was sent forgotten');
  const refreshed = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: session.body.refresh_token } });
  t.equal(refreshed.status, 400, 'the old refresh token no longer works');
  const user = await api.request('GET', '/user', { token: session.body.access_token });
  t.equal(user.status, 403, 'nor does the old access token');
  t.equal((await signIn('taken-back@example.com', 'new-pass-1')).status, 200);
  // An imported hash (ours; the original's update takes only `password`) is a new password too.
  const imported = await api.request('PUT', `/admin/users/${id}`, {
    token: admin,
    body: { password_hash: bcrypt.hashSync('hashed-pass-1', 4) },
  });
  t.equal(imported.status, 200);
  t.equal(await count('sessions'), 0, 'a password_hash ends the sessions as well');
});

t.test('PUT /admin/users/{user_id} confirming an address voids the pending links, as the original confirms', async (t) => {
  const made = await create({ email: 'confirmed-by-hand@example.com', password: 'a-pass-1' });
  t.equal(made.body.email_confirmed_at, undefined);
  const link = await api.request('POST', '/admin/generate_link', {
    token: admin,
    body: { type: 'magiclink', email: 'confirmed-by-hand@example.com' },
  });
  t.equal(link.status, 200);
  const confirmed = await api.request('PUT', `/admin/users/${made.body.id}`, { token: admin, body: { email_confirm: true } });
  t.ok(confirmed.body.email_confirmed_at, 'confirmed');
  const left = await api.db.query('select count(*)::int as n from one_time_tokens where user_id = $1', [made.body.id]);
  t.equal(left.rows[0].n, 0, 'no link or code is left');
  const used = await api.request('POST', '/verify', { body: { type: 'magiclink', token_hash: link.body.hashed_token } });
  t.strictSame([used.status, used.body.error_code], [403, 'otp_expired'], 'the link sent before signs nobody in');
});

t.test("PUT /admin/users/{user_id}: the request's user_metadata has the last word over a confirmation's email_verified", async (t) => {
  const made = await create({ email: 'verified-by-say-so@example.com', password: 'a-pass-1' });
  const res = await api.request('PUT', `/admin/users/${made.body.id}`, {
    token: admin,
    body: { email_confirm: true, user_metadata: { email_verified: false, team: 'red' } },
  });
  t.equal(res.status, 200);
  t.ok(res.body.email_confirmed_at, 'confirmed');
  t.match(res.body.user_metadata, { email_verified: false, team: 'red' }, 'merged after the confirmation, as the original');
});

t.test('PUT /admin/users/{user_id} and generate_link answer the user with its factors, as GET does', async (t) => {
  const made = await create({ email: 'factored@example.com', password: 'factored-1', email_confirm: true });
  const id = made.body.id;
  await api.db.query(`insert into mfa_factors (user_id, friendly_name, factor_type, status) values ($1, 'app', 'totp', 'verified')`, [id]);
  const read = await api.request('GET', `/admin/users/${id}`, { token: admin });
  t.equal(read.body.factors?.length, 1);
  const updated = await api.request('PUT', `/admin/users/${id}`, { token: admin, body: { user_metadata: { b: 2 } } });
  t.strictSame(updated.body.factors, read.body.factors);
  const link = await api.request('POST', '/admin/generate_link', {
    token: admin,
    body: { type: 'magiclink', email: 'factored@example.com' },
  });
  t.equal(link.status, 200);
  t.strictSame(link.body.factors, read.body.factors);
});

t.test('PUT /admin/users/{user_id}: an address another request took meanwhile is the same 422, not a 500', async (t) => {
  const slow = (await create({ email: 'slow-put@example.com' })).body.id;
  const fast = (await create({ email: 'fast-put@example.com' })).body.id;
  for (const [field, value, conflict] of [
    [
      'email',
      'raced@example.com',
      { code: 422, error_code: 'email_exists', msg: 'A user with this email address has already been registered' },
    ],
    ['phone', '15551230000', { code: 422, error_code: 'phone_exists', msg: 'Phone number already registered by another user' }],
  ] as const) {
    // The first update passes the address check, then waits for its user's row (held here) while the
    // second gives the address to another user; the first one's write then meets the unique index.
    const lock = await holdUserLock(api.db, slow);
    const first = api.request('PUT', `/admin/users/${slow}`, { token: admin, body: { [field]: value } });
    await lock.waiters(1);
    const second = await api.request('PUT', `/admin/users/${fast}`, { token: admin, body: { [field]: value } });
    await lock.release();
    t.equal(second.status, 200, `${field}: the second update`);
    const res = await first;
    t.strictSame([res.status, res.body], [422, conflict], `${field}: the first update`);
  }
});

t.test('PUT /admin/users/{user_id} of a user a concurrent DELETE removed meanwhile: 404 user_not_found, not a 500', async (t) => {
  const id = (await create({ email: 'deleted-meanwhile@example.com' })).body.id;
  // The deletion waits for the row first, the update (past its lookup) behind it.
  const res = await behindDeletion(api, id, false, () =>
    api.request('PUT', `/admin/users/${id}`, { token: admin, body: { user_metadata: { late: true } } }),
  );
  t.strictSame([res.status, res.body], [404, { code: 404, error_code: 'user_not_found', msg: 'User not found' }]);
});

t.test('an anonymous user given a confirmed email by an admin becomes permanent', async (t) => {
  const {
    rows: [anon],
  } = await api.db.query(`insert into users (aud, role, is_anonymous) values ('authenticated', 'authenticated', true) returning id`);
  const res = await api.request('PUT', `/admin/users/${anon.id}`, {
    token: admin,
    body: { email: 'was-anon@example.com', email_confirm: true },
  });
  t.equal(res.status, 200);
  t.match(res.body, {
    email: 'was-anon@example.com',
    email_confirmed_at: ISO,
    is_anonymous: false,
    identities: [{ provider: 'email', identity_data: { email: 'was-anon@example.com', email_verified: true } }],
  });
  const unconfirmed = await api.db.query(
    `insert into users (aud, role, is_anonymous) values ('authenticated', 'authenticated', true) returning id`,
  );
  const still = await api.request('PUT', `/admin/users/${unconfirmed.rows[0].id}`, {
    token: admin,
    body: { email: 'still-anon@example.com' },
  });
  t.equal(still.body.is_anonymous, true, 'an unconfirmed address does not');
});

t.test('GET /admin/users pages with X-Total-Count and Link headers, filters and sorts', async (t) => {
  const aud = 'paging';
  const headers = { 'X-JWT-AUD': aud };
  for (let i = 1; i <= 5; i++) {
    const res = await create({ aud, email: `page${i}@list.test`, user_metadata: i === 4 ? { full_name: 'Grace HOPPER' } : {} });
    t.equal(res.status, 200);
  }
  const page1 = await api.request('GET', '/admin/users?per_page=2', { token: admin, headers });
  t.equal(page1.status, 200);
  t.equal(page1.headers.get('x-total-count'), '5');
  t.equal(page1.headers.get('link'), '</admin/users?page=2&per_page=2>; rel="next", </admin/users?page=3&per_page=2>; rel="last"');
  t.equal(page1.body.aud, aud);
  t.strictSame(
    page1.body.users.map((u: any) => u.email),
    ['page5@list.test', 'page4@list.test'],
    'newest first',
  );
  t.equal(page1.body.users[0].identities, null, 'identities are not loaded in the list');

  const page3 = await api.request('GET', '/admin/users?per_page=2&page=3', { token: admin, headers });
  t.strictSame(
    page3.body.users.map((u: any) => u.email),
    ['page1@list.test'],
  );
  t.equal(page3.headers.get('link'), '</admin/users?page=3&per_page=2>; rel="last"', 'no next on the last page');

  const asc = await api.request('GET', '/admin/users?sort=created_at%20asc&per_page=2&page=2', { token: admin, headers });
  t.strictSame(
    asc.body.users.map((u: any) => u.email),
    ['page3@list.test', 'page4@list.test'],
  );
  const firstOrders = await api.request('GET', '/admin/users?sort=created_at%20asc&sort=created_at%20desc&per_page=2&page=2', {
    token: admin,
    headers,
  });
  t.strictSame(firstOrders.body.users, asc.body.users, 'the first sort value orders, as in the original');
  t.equal(
    asc.headers.get('link'),
    '</admin/users?page=3&per_page=2&sort=created_at+asc>; rel="next", </admin/users?page=3&per_page=2&sort=created_at+asc>; rel="last"',
  );

  const byEmail = await api.request('GET', '/admin/users?filter=page2', { token: admin, headers });
  t.strictSame(
    byEmail.body.users.map((u: any) => u.email),
    ['page2@list.test'],
  );
  t.equal(byEmail.headers.get('x-total-count'), '1');
  const byName = await api.request('GET', '/admin/users?filter=hopper', { token: admin, headers });
  t.strictSame(
    byName.body.users.map((u: any) => u.email),
    ['page4@list.test'],
    'full_name matches case-insensitively',
  );

  const other = await api.request('GET', '/admin/users?filter=list.test', { token: admin });
  t.equal(other.headers.get('x-total-count'), '0', 'another audience sees none of them');
  t.equal(other.headers.get('link'), '</admin/users?filter=list.test&page=0>; rel="last"');
  const followed = await api.request('GET', '/admin/users?filter=list.test&page=0', { token: admin });
  t.strictSame(
    [followed.status, followed.body.users, followed.headers.get('link')],
    [200, [], '</admin/users?filter=list.test&page=0>; rel="last"'],
    'the empty list\'s own rel="last" link answers',
  );
  // As the original: page 0 serves page 1, and its Link counts from the 0 asked for.
  const page0 = await api.request('GET', '/admin/users?per_page=2&page=0', { token: admin, headers });
  t.strictSame([page0.status, page0.body.users.map((u: any) => u.email)], [200, ['page5@list.test', 'page4@list.test']]);
  t.equal(page0.headers.get('link'), '</admin/users?page=1&per_page=2>; rel="next", </admin/users?page=3&per_page=2>; rel="last"');

  const badPage = await api.request('GET', '/admin/users?page=abc', { token: admin });
  t.strictSame(
    [badPage.status, badPage.body],
    [
      400,
      { code: 400, error_code: 'validation_failed', msg: 'Bad Pagination Parameters: strconv.ParseUint: parsing "abc": invalid syntax' },
    ],
  );
  const huge = await api.request('GET', '/admin/users?page=9007199254740991&per_page=1000', { token: admin });
  // Far past the last row: an empty page, as the original serves it, never a database error.
  t.strictSame([huge.status, huge.body.users], [200, []]);
  const zero = await api.request('GET', '/admin/users?per_page=0', { token: admin });
  t.strictSame([zero.status, zero.body.msg], [400, 'Bad Pagination Parameters: per_page must be at least 1']);
  const badSort = await api.request('GET', '/admin/users?sort=email', { token: admin });
  t.strictSame(
    [badSort.status, badSort.body],
    [400, { code: 400, error_code: 'validation_failed', msg: "Bad Sort Parameters: bad field for sort 'email'" }],
  );
  const badDir = await api.request('GET', '/admin/users?sort=created_at%20up', { token: admin });
  t.equal(badDir.body.msg, "Bad Sort Parameters: bad direction for sort 'up', only 'asc' and 'desc' allowed");
  // As the original: the direction is everything after the first space, and every value is checked.
  const trailing = await api.request('GET', '/admin/users?sort=created_at%20asc%20x', { token: admin });
  t.strictSame(
    [trailing.status, trailing.body.msg],
    [400, "Bad Sort Parameters: bad direction for sort 'asc x', only 'asc' and 'desc' allowed"],
  );
  const laterBad = await api.request('GET', '/admin/users?sort=created_at&sort=created_at%20sideways', { token: admin });
  t.equal(laterBad.status, 400);
});

t.test('DELETE /admin/users/{user_id} removes the user and ends all its sessions and refresh tokens at once', async (t) => {
  const made = await create({ email: 'doomed@example.com', password: 'doomed-pass', email_confirm: true });
  const id = made.body.id;
  const a = await signIn('doomed@example.com', 'doomed-pass');
  const b = await signIn('doomed@example.com', 'doomed-pass');
  t.equal(a.status, 200);
  t.equal(b.status, 200);
  const before = await api.db.query('select count(*)::int as n from refresh_tokens where user_id = $1', [id]);
  t.equal(before.rows[0].n, 2);
  const res = await api.request('DELETE', `/admin/users/${id}`, { token: admin });
  t.strictSame([res.status, res.body], [200, {}]);
  for (const table of ['users', 'identities', 'sessions', 'refresh_tokens']) {
    const column = table === 'users' ? 'id' : 'user_id';
    const { rows } = await api.db.query(`select count(*)::int as n from ${table} where ${column} = $1`, [id]);
    t.equal(rows[0].n, 0, `${table} rows gone`);
  }
  const me = await api.request('GET', '/user', { token: a.body.access_token });
  t.equal(me.status, 403, 'the access token of a deleted user no longer works');
  t.equal(me.body.error_code, 'user_not_found');
  const again = await api.request('DELETE', `/admin/users/${id}`, { token: admin });
  t.strictSame([again.status, again.body], [404, { code: 404, error_code: 'user_not_found', msg: 'User not found' }]);
  const other = await create({ email: 'kept@example.com' });
  const notBool = await api.request('DELETE', `/admin/users/${other.body.id}`, { token: admin, body: { should_soft_delete: 'yes' } });
  t.strictSame(
    [notBool.status, notBool.body],
    [
      400,
      {
        code: 400,
        error_code: 'bad_json',
        msg: 'Could not parse request body as JSON: json: cannot unmarshal string into Go struct field adminUserDeleteParams.should_soft_delete of type bool',
      },
    ],
  );
  const badJson = await api.request('DELETE', `/admin/users/${other.body.id}`, {
    token: admin,
    raw: '{',
    headers: { 'content-type': 'application/json' },
  });
  t.strictSame([badJson.status, badJson.body.error_code], [400, 'bad_json']);
  t.equal((await api.request('GET', `/admin/users/${other.body.id}`, { token: admin })).status, 200, 'a refused delete deletes nothing');
  const bad = await api.request('DELETE', '/admin/users/123', { token: admin });
  t.strictSame([bad.status, bad.body.error_code], [404, 'validation_failed']);
});

t.test('soft delete anonymises the row, ends its sessions, and repeating it is a no-op', async (t) => {
  const made = await create({
    email: 'soft@example.com',
    phone: '+14155550199',
    password: 'soft-pass',
    email_confirm: true,
    user_metadata: { full_name: 'Soft' },
  });
  const id = made.body.id;
  t.equal((await signIn('soft@example.com', 'soft-pass')).status, 200);
  await api.db.query(
    `insert into mfa_factors (user_id, friendly_name, factor_type, status, phone) values ($1, 'mine', 'phone', 'verified', '14155550199')`,
    [id],
  );
  const res = await api.request('DELETE', `/admin/users/${id}`, { token: admin, body: { should_soft_delete: true } });
  t.strictSame([res.status, res.body], [200, {}]);
  const {
    rows: [u],
  } = await api.db.query('select * from users where id = $1', [id]);
  t.ok(u.deleted_at);
  t.not(u.email, 'soft@example.com');
  t.match(u.email, /^[A-Za-z0-9_-]{43}$/, 'email is a base64url SHA-256');
  t.equal(u.phone.length, 15);
  t.equal(u.encrypted_password, null);
  t.strictSame([u.raw_user_meta_data, u.raw_app_meta_data], [{}, {}]);
  const { rows: ids } = await api.db.query('select identity_data from identities where user_id = $1', [id]);
  t.ok(ids.every((i: any) => Object.keys(i.identity_data).length === 0));
  for (const table of ['sessions', 'refresh_tokens', 'mfa_factors']) {
    const { rows } = await api.db.query(`select count(*)::int as n from ${table} where user_id = $1`, [id]);
    t.equal(rows[0].n, 0, `${table} gone`);
  }
  t.equal((await signIn('soft@example.com', 'soft-pass')).status, 400);
  const shown = await api.request('GET', `/admin/users/${id}`, { token: admin });
  t.match(shown.body, { deleted_at: ISO });
  const again = await api.request('DELETE', `/admin/users/${id}`, { token: admin, body: { should_soft_delete: true } });
  t.strictSame([again.status, again.body], [200, {}]);
  const reuse = await create({ email: 'soft@example.com' });
  t.equal(reuse.status, 200, 'the address is free again');
});

t.test('admin actions are audited under the zero-UUID pseudo-user named after the role', async (t) => {
  const made = await create({ email: 'audited@example.com' });
  await api.request('PUT', `/admin/users/${made.body.id}`, { token: admin, body: { role: 'x' } });
  await api.request('DELETE', `/admin/users/${made.body.id}`, { token: admin });
  const { rows } = await api.db.query(
    `select payload from audit_log_entries where payload -> 'traits' ->> 'user_id' = $1 order by created_at`,
    [made.body.id],
  );
  t.strictSame(
    rows.map((r: any) => [r.payload.action, r.payload.log_type]),
    [
      ['user_signedup', 'team'],
      ['user_modified', 'user'],
      ['user_deleted', 'team'],
    ],
  );
  for (const { payload } of rows) {
    t.match(payload, {
      actor_id: '00000000-0000-0000-0000-000000000000',
      actor_username: 'service_role',
      actor_via_sso: false,
      traits: { user_id: made.body.id, user_email: 'audited@example.com' },
    });
  }
});
