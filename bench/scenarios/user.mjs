// GET /user with a valid bearer token per connection, against the same single statement (user, session
// and identities in one round trip) driven directly through pg with the service's pools. user-es256
// (variants.mjs) runs it on a service whose tokens are ES256.
import { openSqlLimit } from '../limits/sql.mjs';
import { openMinimalHandler } from '../limits/handler.mjs';
import { claimsOf } from '../lib/context.mjs';

export const USER_CONNECTIONS = 32;

export async function runUser(bench, { title = 'user' } = {}) {
  const connections = USER_CONNECTIONS;
  const sessions = await bench.sessions(connections);
  const fixture = { sessions: sessions.map((s) => ({ userId: s.user.id, sessionId: claimsOf(s.access_token).session_id })) };
  const perConnection = (i) => [{ method: 'GET', headers: { authorization: `Bearer ${sessions[i].access_token}` } }];
  const sql = await openSqlLimit(bench.service, bench.options, { kind: 'user', concurrency: connections, fixture });
  // The minimal handler (HS256 by node:crypto) only when the service signs HS256: user-es256 has none.
  const handler =
    bench.service.jwtSecret && !title.includes('es256')
      ? await openMinimalHandler(bench.service, { path: '/user', connections, perConnection })
      : null;
  const {
    result,
    limit,
    rates,
    handler: handled,
  } = await bench
    .bracket(sql.measure, (o) => bench.load({ duration: o.duration, title, path: '/user', connections, perConnection }), handler)
    .finally(() => Promise.all([sql.close(), handler?.close()]));
  return bench.compare(
    { ...result, connections },
    {
      limit,
      limitDetail: { samples: rates },
      limitKind: 'the same 1 query/s through pg, same pools',
      target: 0.8,
      guide: 4500,
      handler: handled,
      handlerTarget: 0.75,
      handlerCpuTarget: 1.3,
    },
  );
}

export default {
  name: 'user',
  describe: 'GET /user, one signed-in session per connection',
  run: (bench) => runUser(bench),
};
