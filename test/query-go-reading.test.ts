// Query strings read as the original's Go query parser reads them (docs/api.md#query-strings): a pair with a
// ';' or a bad '%' escape in it is left out and the others are kept, so the route acts as if it had not
// been sent. Seen on POST /logout, whose scope falls back to global when its pair is left out, and on a SCIM
// list, which a left-out filter does not refuse. The reader itself is checked against URLSearchParams.
import t from 'tap';
import { goParseQuery } from '../dist/server/http/go-query.js';
import { startTestService } from './helpers/server.js';
import { signIn, signUp, type Session } from './helpers/accounts.js';
import { EMPTY_LIST, FILTER_FORBIDDEN } from './helpers/scim.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', GOTRUE_EXPERIMENTAL_SCIM_ENABLED: 'true' });
t.teardown(() => api.stop());

const pairs = (raw: string) => [...goParseQuery(raw).values];

t.test('the reader: which pairs are kept, and how they decode', async (t) => {
  t.strictSame(pairs('scope=local;x'), [], "a ';' in the value leaves the pair out");
  t.strictSame(pairs('a;b=1&c=2'), [['c', '2']], "a ';' in the name too; the rest is kept");
  t.strictSame(pairs('a=%zz&b=%4&c=%41'), [['c', 'A']], 'a % without two hex digits leaves its pair out');
  t.strictSame(pairs('%zz=1&d=2'), [['d', '2']], 'in the name too');
  t.strictSame(
    pairs('a=1+2%202&A=x'),
    [
      ['a', '1 2 2'],
      ['A', 'x'],
    ],
    "'+' is a space; names keep their case",
  );
  t.strictSame(pairs('?scope=local'), [['?scope', 'local']], "a leading '?' is part of the first name");
  t.strictSame(
    pairs('&&k&=v&x=%C3%A9'),
    [
      ['k', ''],
      ['', 'v'],
      ['x', 'é'],
    ],
    'empty pieces skipped, bare names kept',
  );
  t.equal(goParseQuery('a=1;&b=2').malformed, true, 'the error is there for a reader that checks it');
  t.equal(goParseQuery('a=1&b=%20').malformed, false);
});

async function threeSessions(): Promise<Session[]> {
  const a = await signUp(api);
  return [a, await signIn(api, a.user.email), await signIn(api, a.user.email)];
}

const alive = async (s: Session) => (await api.request('GET', '/user', { token: s.access_token })).status === 200;

t.test('POST /logout?scope=local;x is a logout without a scope: every session ends', async (t) => {
  for (const query of ['?scope=local;x', '?scope=loc%zzal', '?scope=local%', '??scope=local', '?Scope=local']) {
    const sessions = await threeSessions();
    const res = await api.request('POST', `/logout${query}`, { token: sessions[1].access_token });
    t.equal(res.status, 204, `${query}: status`);
    for (const s of sessions) t.notOk(await alive(s), `${query}: every session ended`);
  }
});

t.test('the pairs beside a left-out one are read', async (t) => {
  for (const query of ['?a=%zz&scope=local', '?scope=local&x;=1', '?scope=local&x=%00;']) {
    const [a, b] = await threeSessions();
    t.equal((await api.request('POST', `/logout${query}`, { token: b.access_token })).status, 204, query);
    t.notOk(await alive(b), `${query}: the caller's session ended`);
    t.ok(await alive(a), `${query}: local, the others remain`);
  }
  const unsupported = await api.request('POST', '/logout?scope=local+', { token: (await signUp(api)).access_token });
  t.equal(unsupported.status, 400, "'+' is a space in a kept pair");
  t.equal(unsupported.body.msg, 'Unsupported logout scope "local "');
});

t.test('a SCIM filter left out asks for no filter', async (t) => {
  const list = await api.request('GET', '/scim/v2/Schemas?filter=%zz');
  t.equal(list.status, 200);
  t.equal(list.text, JSON.stringify(EMPTY_LIST));
  const refused = await api.request('GET', '/scim/v2/Schemas?x=%zz&filter=a');
  t.equal(refused.status, 403);
  t.equal(refused.text, JSON.stringify(FILTER_FORBIDDEN));
});
