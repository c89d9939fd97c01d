// GET /admin/audit (REFERENCE §14.4): newest first, paged with the same headers as the user list, and
// filtered by author, action or type.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';

const api = await startTestService();
t.teardown(() => api.stop());
const admin = await adminToken();
const audit = (query = '') => api.request('GET', `/admin/audit${query}`, { token: admin });

const made = await api.request('POST', '/admin/users', {
  token: admin,
  body: { email: 'audit@example.com', password: 'audit-pass', email_confirm: true },
});
await api.request('PUT', `/admin/users/${made.body.id}`, { token: admin, body: { role: 'auditor' } });
await api.request('POST', '/token?grant_type=password', { body: { email: 'audit@example.com', password: 'audit-pass' } });

t.test('the log, newest first, as the original renders its entries', async (t) => {
  const res = await audit();
  t.equal(res.status, 200);
  t.equal(res.headers.get('x-total-count'), '3');
  t.strictSame(
    res.body.map((e: any) => e.payload.action),
    ['login', 'user_modified', 'user_signedup'],
  );
  t.strictSame(
    Object.keys(res.body[0]).sort(),
    ['created_at', 'id', 'ip_address', 'payload'],
    "the original's fields, without instance_id",
  );
  t.match(res.body[0].payload, { actor_id: made.body.id, actor_username: 'audit@example.com', log_type: 'account' });
});

t.test('paging and filters', async (t) => {
  const page = await audit('?per_page=2&page=1');
  t.equal(page.body.length, 2);
  t.equal(page.headers.get('link'), '</admin/audit?page=2&per_page=2>; rel="next", </admin/audit?page=2&per_page=2>; rel="last"');
  // As the original: page 0 serves page 1, its Link counting from the 0 asked for.
  const page0 = await audit('?per_page=2&page=0');
  t.strictSame(
    [page0.status, page0.body.map((e: any) => e.id), page0.headers.get('link')],
    [200, page.body.map((e: any) => e.id), '</admin/audit?page=1&per_page=2>; rel="next", </admin/audit?page=2&per_page=2>; rel="last"'],
  );
  const empty = await audit('?query=action:nothing-like-this&page=0');
  t.strictSame(
    [empty.status, empty.body, empty.headers.get('link')],
    [200, [], '</admin/audit?page=0&query=action%3Anothing-like-this>; rel="last"'],
  );
  const byAuthor = await audit('?query=author:SERVICE_ROLE');
  t.strictSame(
    byAuthor.body.map((e: any) => e.payload.action),
    ['user_modified', 'user_signedup'],
  );
  const byAction = await audit('?query=action:login');
  t.strictSame(
    byAction.body.map((e: any) => e.payload.action),
    ['login'],
  );
  const byType = await audit('?query=type:team');
  t.strictSame(
    byType.body.map((e: any) => e.payload.action),
    ['user_signedup'],
  );
  const bad = await audit('?query=color:red');
  t.strictSame([bad.status, bad.body], [400, { code: 400, error_code: 'validation_failed', msg: 'Invalid query scope: color:red' }]);
  const unauthorised = await api.request('GET', '/admin/audit');
  t.equal(unauthorised.status, 401);
});
