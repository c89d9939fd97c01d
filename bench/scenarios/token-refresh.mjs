// Refresh grants, one session per connection chaining its rotated tokens, against the grant's two
// statements on its usual path (find the token; then one autocommit statement that locks the session,
// rotates with its audit and reads AMR and identities) driven directly through pg with the service's pools.
// The variants (variants.mjs) run the same load on a service signing with ES256, or calling a custom
// access token hook, whose limit then adds the hook call.
import { openSqlLimit } from '../limits/sql.mjs';
import { openMinimalHandler } from '../limits/handler.mjs';
import { refreshChain, refreshUnsupported } from '../lib/refresh.mjs';

export const REFRESH_CONNECTIONS = 32;

/** The scenario on `bench`'s service; `limit` chooses the SQL workload and what the line calls it. */
export async function runRefresh(
  bench,
  { title = 'token-refresh', kind = 'refresh', extraFixture = {}, limitKind = "the grant's statements/s through pg, same pools" } = {},
) {
  const connections = REFRESH_CONNECTIONS;
  const sessions = await bench.sessions(connections);
  const skipped = await refreshUnsupported(bench.service.url, sessions[0]);
  if (skipped) return { skipped };
  const fixture = { users: sessions.map((s) => ({ userId: s.user.id })), ...extraFixture };
  const sql = await openSqlLimit(bench.service, bench.options, { kind, concurrency: connections, fixture });
  // The minimal handler rotates sessions of its own (the chains would otherwise present each other's
  // rotated tokens), on the plain grant only: the variants' signing and hooks are not in it.
  const handler =
    bench.service.jwtSecret && title === 'token-refresh'
      ? await bench
          .sessions(connections)
          .then((own) => openMinimalHandler(bench.service, { path: '/token', connections, perConnection: (i) => refreshChain(own[i]) }))
      : null;
  const {
    result,
    limit,
    rates,
    handler: handled,
  } = await bench
    .bracket(
      sql.measure,
      (o) => bench.load({ duration: o.duration, title, path: '/token', connections, perConnection: (i) => refreshChain(sessions[i]) }),
      handler,
    )
    .finally(() => Promise.all([sql.close(), handler?.close()]));
  return bench.compare(
    { ...result, connections },
    {
      limit,
      limitDetail: { samples: rates },
      limitKind,
      target: 0.7,
      guide: 1500,
      handler: handled,
      handlerTarget: 0.75,
      databaseCpuTarget: 1.5,
    },
  );
}

export default {
  name: 'token-refresh',
  describe: 'POST /token?grant_type=refresh_token, one session per connection, each presenting its newest token',
  run: (bench) => runRefresh(bench),
};
