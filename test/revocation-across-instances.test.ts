// Every bearer check reads the user and the session from the database, never from a copy kept by a thread
// or an instance: a logout, a ban or a deletion made through one instance is refused by the other on the
// very next request, whichever of its HTTP threads takes it. Two instances of two HTTP threads each share
// one database, as a deployment behind a load balancer does.
import t from 'tap';
import http from 'node:http';
import { createTestDatabase } from './helpers/db.js';
import { startTestService, type TestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { signUp, type Session } from './helpers/accounts.js';

const database = await createTestDatabase();
const instance = () => startTestService({ DATABASE_URL: database.url, AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_HTTP_WORKERS: '2' });
const a: TestService = await instance();
const b: TestService = await instance();
t.teardown(async () => {
  await a.stop();
  await b.stop();
  await database.drop();
});
const admin = await adminToken();

// The guard hands each new connection to the next HTTP thread, round robin: eight connections reach both.
const ROUNDS = 8;

/** GET /user on a new connection (no keep-alive agent): status and error_code, or the user's id. */
function readOnNewConnection(api: TestService, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${api.url}/user`, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const body = JSON.parse(text);
        resolve(`${res.statusCode} ${body.error_code ?? body.id}`);
      });
    });
    req.on('error', reject);
  });
}

/** GET /user on `api` ROUNDS times, each on a connection of its own; the distinct answers. */
async function readsOn(api: TestService, session: Session): Promise<string[]> {
  const answers = new Set<string>();
  for (let i = 0; i < ROUNDS; i++) answers.add(await readOnNewConnection(api, session.access_token));
  return [...answers];
}

t.test('a logout through one instance ends the session on the other', async (t) => {
  const session = await signUp(a);
  t.strictSame(await readsOn(b, session), [`200 ${session.user.id}`], 'the other instance knows the session');
  t.equal((await a.request('POST', '/logout', { token: session.access_token })).status, 204);
  t.strictSame(await readsOn(b, session), ['403 session_not_found'], 'refused on every thread of the other instance');
  t.strictSame(await readsOn(a, session), ['403 session_not_found'], 'and on the instance that logged out');
});

t.test('a ban through one instance is refused by the other at once', async (t) => {
  const session = await signUp(a);
  t.strictSame(await readsOn(b, session), [`200 ${session.user.id}`]);
  const ban = await a.request('PUT', `/admin/users/${session.user.id}`, { token: admin, body: { ban_duration: '1h' } });
  t.equal(ban.status, 200);
  t.strictSame(await readsOn(b, session), ['403 user_banned']);
});

t.test('a user deleted through one instance is unknown to the other at once', async (t) => {
  const session = await signUp(a);
  t.strictSame(await readsOn(b, session), [`200 ${session.user.id}`]);
  t.equal((await a.request('DELETE', `/admin/users/${session.user.id}`, { token: admin })).status, 200);
  t.strictSame(await readsOn(b, session), ['403 user_not_found']);
});
