// GET /admin/users in cursor (keyset) mode, the original's experimental EXPERIMENTAL_CURSOR_PAGINATION_ENABLED:
// every user seen exactly once and in order across pages, ties on created_at within one millisecond, rows
// added and removed between pages, filter and sort with a cursor, the refusals of bad cursors and limits,
// which requests stay in page-number mode, the switch off, and the index the statement reads.
import t from 'tap';
import { GoTrueAdminApi } from '@supabase/auth-js';
import { startTestService, type TestService, type Reply } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { listUsersAfter } from '../dist/db/users.js';

const api = await startTestService({ AUTH_EXPERIMENTAL_CURSOR_PAGINATION_ENABLED: 'true' });
t.teardown(() => api.stop());
const admin = await adminToken('service_role');
const BASE = '2020-06-01T12:00:00Z';

const list = (svc: TestService, aud: string, query: string) =>
  svc.request('GET', `/admin/users?${query}`, { token: admin, headers: { 'X-JWT-AUD': aud } });

/** Creates users through the admin API, then places each at BASE + micros[i] microseconds. Returns their ids. */
async function seed(svc: TestService, aud: string, micros: number[], email = (i: number) => `u${i}@${aud}.test`) {
  const ids: string[] = [];
  for (const [i, offset] of micros.entries()) {
    const res = await svc.request('POST', '/admin/users', { token: admin, body: { aud, email: email(i) } });
    if (res.status !== 200) throw new Error(`creating a user: ${res.status} ${res.text}`);
    await svc.db.query(`update users set created_at = $1::timestamptz + $2 * interval '1 microsecond' where id = $3`, [
      BASE,
      offset,
      res.body.id,
    ]);
    ids.push(res.body.id);
  }
  return ids;
}

/** The list order the original promises: created_at, then id, both descending. */
function newestFirst(ids: string[], micros: number[]): string[] {
  return ids
    .map((id, i) => ({ id, at: micros[i] }))
    .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1))
    .map((u) => u.id);
}

/** Follows the Link rel="next" of each page until the last; returns the pages. */
async function walk(svc: TestService, aud: string, first: string): Promise<Reply[]> {
  const pages: Reply[] = [];
  let target: string | null = `/admin/users?${first}`;
  while (target && pages.length < 20) {
    const res: Reply = await svc.request('GET', target, { token: admin, headers: { 'X-JWT-AUD': aud } });
    pages.push(res);
    target = res.headers.get('link')?.match(/^<([^>]+)>; rel="next"$/)?.[1] ?? null;
  }
  return pages;
}

const cursorOf = (obj: unknown) => Buffer.from(JSON.stringify(obj)).toString('base64url');
const idsOf = (res: Reply): string[] => res.body.users.map((u: any) => u.id);

// 25 users in 7 groups sharing a created_at, the groups a microsecond apart: all inside one millisecond,
// and the page boundaries (limit 7) fall inside groups.
const walkMicros = Array.from({ length: 25 }, (_, i) => Math.floor(i / 4));
const walkIds = await seed(api, 'walk', walkMicros);
const walkOrder = newestFirst(walkIds, walkMicros);

t.test('limit 7 walks 25 users, ties within one millisecond, each exactly once, newest first', async (t) => {
  const pages = await walk(api, 'walk', 'limit=7');
  t.strictSame(
    pages.map((p) => [p.status, p.body.users.length, p.body.pagination.has_more]),
    [
      [200, 7, true],
      [200, 7, true],
      [200, 7, true],
      [200, 4, false],
    ],
  );
  t.strictSame(pages.flatMap(idsOf), walkOrder, 'every user once, in (created_at, id) descending order');
  for (const [i, page] of pages.entries()) {
    t.equal(page.body.aud, 'walk');
    t.equal(page.headers.get('x-total-count'), null, 'no count in cursor mode');
    if (i < 3) {
      const next = page.body.pagination.next_cursor;
      t.equal(page.headers.get('link'), `</admin/users?cursor=${next}&limit=7>; rel="next"`);
      t.match(JSON.parse(Buffer.from(next, 'base64url').toString()), {
        created_at: /^2020-06-01T12:00:00\.00000\dZ$/,
        id: walkOrder[7 * i + 6],
      });
    }
  }
  t.strictSame(Object.keys(pages[3].body), ['users', 'aud', 'pagination']);
  t.strictSame(pages[3].body.pagination, { has_more: false }, 'no next_cursor on the last page');
  t.equal(pages[3].headers.get('link'), null, 'no Link on the last page');
});

t.test('sort=created_at asc walks the other way; the default limit is 50', async (t) => {
  const asc = await walk(api, 'walk', 'sort=created_at%20asc&limit=7');
  t.strictSame(asc.flatMap(idsOf), [...walkOrder].reverse());
  t.match(asc[0].headers.get('link'), /^<\/admin\/users\?cursor=[\w-]+&limit=7&sort=created_at\+asc>; rel="next"$/);
  const all = await list(api, 'walk', '');
  t.strictSame([idsOf(all), all.body.pagination], [walkOrder, { has_more: false }]);
});

t.test('users added and removed between pages: the walk goes on from where it was', async (t) => {
  const micros = Array.from({ length: 10 }, (_, i) => i * 1_000_000);
  const ids = await seed(api, 'churn', micros);
  const order = newestFirst(ids, micros); // u9 … u0
  const first = await list(api, 'churn', 'limit=4');
  t.strictSame(idsOf(first), order.slice(0, 4));

  // The row the cursor names is gone, so is one not seen yet; a user newer than the cursor is behind it,
  // one older than the cursor is ahead.
  t.equal((await api.request('DELETE', `/admin/users/${order[3]}`, { token: admin })).status, 200);
  t.equal((await api.request('DELETE', `/admin/users/${order[5]}`, { token: admin })).status, 200);
  const [newest] = await seed(api, 'churn', [60_000_000], () => 'newest@churn.test');
  const [between] = await seed(api, 'churn', [4_500_000], () => 'between@churn.test');
  const rest = await walk(api, 'churn', `limit=4&cursor=${first.body.pagination.next_cursor}`);
  t.strictSame(rest.map(idsOf), [
    [order[4], between, order[6], order[7]],
    [order[8], order[9]],
  ]);
  t.notOk(rest.flatMap(idsOf).includes(newest), 'a user newer than the cursor is not on the later pages');
});

t.test('filter applies to every page and is kept in the Link', async (t) => {
  const micros = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const names = ['match-a', 'other-b', 'match-c', 'other-d', 'match-e', 'other-f', 'match-g', 'name-h', 'match-i'];
  const ids = await seed(api, 'filtered', micros, (i) => `${names[i]}@filtered.test`);
  await api.db.query(`update users set raw_user_meta_data = '{"full_name": "Ada MATCHES"}' where id = $1`, [ids[7]]);
  const pages = await walk(api, 'filtered', 'filter=match&limit=4');
  const matching = newestFirst(ids, micros).filter((id) => [0, 2, 4, 6, 7, 8].includes(ids.indexOf(id)));
  t.strictSame(pages.map(idsOf), [matching.slice(0, 4), matching.slice(4)]);
  t.equal(pages[0].headers.get('link'), `</admin/users?cursor=${pages[0].body.pagination.next_cursor}&filter=match&limit=4>; rel="next"`);
});

t.test('a cursor is unsigned: another valid key moves the start point, never past the audience', async (t) => {
  const first = await list(api, 'walk', 'limit=7');
  const genuine = JSON.parse(Buffer.from(first.body.pagination.next_cursor, 'base64url').toString());
  const second = await list(api, 'walk', `limit=7&cursor=${first.body.pagination.next_cursor}`);

  // The same key in the other forms the original reads: field names in any case, another offset, a braced upper-case id.
  const instant = new Date(genuine.created_at.replace(/\.\d+Z$/, 'Z'));
  const plusTwo = new Date(instant.getTime() + 2 * 3600_000)
    .toISOString()
    .replace(/\.000Z$/, (genuine.created_at.match(/\.\d+/)?.[0] ?? '') + '+02:00');
  const respelled = cursorOf({ CREATED_AT: plusTwo, Id: `{${genuine.id.toUpperCase()}}`, extra: 1 });
  t.strictSame(idsOf(await list(api, 'walk', `limit=7&cursor=${respelled}`)), idsOf(second));

  // The highest id at that created_at: the page starts with the first user of that time.
  const edited = cursorOf({ created_at: genuine.created_at, id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' });
  const groupStart = walkOrder.findIndex((id) => walkMicros[walkIds.indexOf(id)] === walkMicros[walkIds.indexOf(genuine.id)]);
  t.strictSame(idsOf(await list(api, 'walk', `limit=7&cursor=${edited}`)), walkOrder.slice(groupStart, groupStart + 7));

  const elsewhere = await list(api, 'filtered', `cursor=${first.body.pagination.next_cursor}`);
  t.equal(elsewhere.status, 200);
  t.ok(elsewhere.body.users.length > 0);
  t.ok(
    elsewhere.body.users.every((u: any) => u.aud === 'filtered'),
    "another audience's cursor reads only the requested audience",
  );
});

t.test('malformed cursors and limits: 400 validation_failed, as the original', async (t) => {
  const id = crypto.randomUUID();
  const at = '2024-03-04T05:06:07.123456Z';
  const cases: Array<[string, string]> = [
    ['cursor=not-a-valid-cursor*', 'invalid cursor encoding: illegal base64 data at input byte 18'],
    ['cursor=eyJhIjoxfQ==', 'invalid cursor encoding: illegal base64 data at input byte 10'],
    ['cursor=abcde', 'invalid cursor encoding: illegal base64 data at input byte 4'],
    [`cursor=${Buffer.from('not-json').toString('base64url')}`, 'invalid cursor: not JSON'],
    [`cursor=${cursorOf([at, id])}`, 'invalid cursor: not a JSON object'],
    [`cursor=${cursorOf({ created_at: at })}`, 'invalid cursor: missing id'],
    [`cursor=${cursorOf({ created_at: at, id: '00000000-0000-0000-0000-000000000000' })}`, 'invalid cursor: missing id'],
    [`cursor=${cursorOf({ id })}`, 'invalid cursor: missing created_at'],
    [`cursor=${cursorOf({ created_at: null, id })}`, 'invalid cursor: missing created_at'],
    [`cursor=${cursorOf({ created_at: '0001-01-01T00:00:00Z', id })}`, 'invalid cursor: missing created_at'],
    [`cursor=${cursorOf({ created_at: 1709528767, id })}`, 'invalid cursor: created_at is not a string'],
    [
      `cursor=${cursorOf({ created_at: '2024-02-30T00:00:00Z', id })}`,
      'invalid cursor: created_at "2024-02-30T00:00:00Z" is not an RFC 3339 time',
    ],
    [
      `cursor=${cursorOf({ created_at: '2024-03-04 05:06:07', id })}`,
      'invalid cursor: created_at "2024-03-04 05:06:07" is not an RFC 3339 time',
    ],
    [`cursor=${cursorOf({ created_at: at, id: 'abc' })}`, 'invalid cursor: id "abc" is not a UUID'],
    ['limit=0', 'limit must be greater than 0'],
    ['limit=abc', 'strconv.ParseUint: parsing "abc": invalid syntax'],
    ['limit=-1', 'strconv.ParseUint: parsing "-1": invalid syntax'],
    ['limit=18446744073709551616', 'strconv.ParseUint: parsing "18446744073709551616": value out of range'],
  ];
  for (const [query, detail] of cases) {
    const res = await list(api, 'walk', query);
    t.strictSame(
      [res.status, res.body],
      [400, { code: 400, error_code: 'validation_failed', msg: `Bad Pagination Parameters: ${detail}` }],
      query,
    );
  }
  const badSort = await list(api, 'walk', 'sort=email&cursor=*');
  t.equal(badSort.body.msg, "Bad Sort Parameters: bad field for sort 'email'", 'the sort is checked first');
});

t.test('limit is capped at 1000', async (t) => {
  await api.db.query(`insert into users (aud, email) select 'cap', 'cap' || g || '@cap.test' from generate_series(1, 1001) g`);
  const [first, last] = await walk(api, 'cap', 'limit=18446744073709551615');
  t.strictSame([first.body.users.length, first.body.pagination.has_more], [1000, true]);
  t.strictSame([last.body.users.length, last.body.pagination], [1, { has_more: false }]);
});

t.test('with the switch on, page or per_page keeps page-number mode', async (t) => {
  const paged = await list(api, 'walk', 'page=2&per_page=7&cursor=*&limit=0');
  t.equal(paged.status, 200, 'cursor and limit are not read');
  t.strictSame(idsOf(paged), walkOrder.slice(7, 14));
  t.equal(paged.headers.get('x-total-count'), '25');
  t.equal(
    paged.headers.get('link'),
    '</admin/users?cursor=%2A&limit=0&page=3&per_page=7>; rel="next", </admin/users?cursor=%2A&limit=0&page=4&per_page=7>; rel="last"',
  );
  t.notOk('pagination' in paged.body);
  const perPageOnly = await list(api, 'walk', 'per_page=7');
  t.strictSame([idsOf(perPageOnly), perPageOnly.headers.get('x-total-count')], [walkOrder.slice(0, 7), '25']);
  const pageOnly = await list(api, 'walk', 'page=1');
  t.strictSame([pageOnly.body.users.length, pageOnly.headers.get('x-total-count')], [25, '25']);
  const empty = await list(api, 'walk', 'page=&per_page=&limit=7');
  t.strictSame([idsOf(empty), empty.body.pagination.has_more], [walkOrder.slice(0, 7), true], 'empty page and per_page count as absent');
  t.equal(empty.headers.get('link'), `</admin/users?cursor=${empty.body.pagination.next_cursor}&limit=7&per_page=>; rel="next"`);

  // auth-js sends page= and per_page= (empty) when called without arguments, so that is cursor mode.
  const client = new GoTrueAdminApi({ url: api.url, headers: { Authorization: `Bearer ${admin}`, 'X-JWT-AUD': 'walk' } });
  const bare = await client.listUsers();
  t.equal(bare.error, null);
  t.strictSame(
    [bare.data.users.map((u) => u.id), (bare.data as any).total, (bare.data as any).pagination],
    [walkOrder, 0, { has_more: false }],
  );
  const numbered = await client.listUsers({ page: 1, perPage: 7 });
  t.strictSame(
    [numbered.data.users.map((u) => u.id), (numbered.data as any).total, (numbered.data as any).nextPage],
    [walkOrder.slice(0, 7), 25, 2],
  );
  t.notOk('pagination' in numbered.data);
});

t.test('the keyset statement reads users_aud_created_at_id_idx in order, with no sort', async (t) => {
  const client = await api.db.connect();
  await client.query('analyze users');
  await client.query('set enable_seqscan = off');
  t.teardown(async () => {
    await client.query('reset enable_seqscan');
    client.release();
  });
  const plans: string[] = [];
  // Runs the statement listUsersAfter builds under EXPLAIN and keeps the plan; the function then sees one odd row.
  const explaining = {
    query: async (text: string, values: unknown[]) => {
      const { rows } = await client.query(`explain (format json) ${text}`, values);
      plans.push(JSON.stringify(rows[0]['QUERY PLAN']));
      return { rows: [] };
    },
  };
  const after = { createdAt: '2020-06-01T12:00:00.000003Z', id: walkOrder[10] };
  for (const ascending of [false, true]) {
    await listUsersAfter(explaining as any, { aud: 'walk', filter: '', ascending, limit: 7, after: null });
    await listUsersAfter(explaining as any, { aud: 'walk', filter: '', ascending, limit: 7, after });
  }
  t.equal(plans.length, 4);
  for (const plan of plans) {
    t.match(plan, /"Index Name":"users_aud_created_at_id_idx"/);
    t.notMatch(plan, /Sort/, 'the index gives the order');
  }
});

t.test('with the switch off (the default) the list is page-numbered whatever the query', async (t) => {
  const off = await startTestService();
  t.teardown(() => off.stop());
  const ids = await seed(off, 'authenticated', [0, 1, 2]);
  const res = await off.request('GET', `/admin/users?limit=1&cursor=*`, { token: admin });
  t.equal(res.status, 200);
  t.strictSame([idsOf(res), res.headers.get('x-total-count')], [[...ids].reverse(), '3']);
  t.notOk('pagination' in res.body);
  const client = new GoTrueAdminApi({ url: off.url, headers: { Authorization: `Bearer ${admin}` } });
  const { data } = await client.listUsers();
  t.strictSame([data.users.length, (data as any).total, 'pagination' in data], [3, 3, false]);
});
