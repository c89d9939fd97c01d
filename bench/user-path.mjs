// The CPU of GET /user's own JavaScript, without uWS or PostgreSQL, against dist/ (run `npm run build`
// first): the route as the router compiled it (guard, HS256 verify, the statement's result handling with
// a canned row as pg hands it over, userJson), withTimeout, serialise with JSON.stringify and the request
// record (metrics off, the pino line written to /dev/null); and, for comparison, the same row through
// the minimal handler's JavaScript (bench/limits/handler-thread.mjs: node:crypto verify, its userJson,
// JSON.stringify). 32 requests in flight, each waiting a setImmediate for its "statement". The difference
// between the two is what the service's layers cost beyond the handler's, apart from uWS and pg, which
// both pay alike; it moves far less with the machine's load than the HTTP bench (bench/README.md).
// Usage: node bench/user-path.mjs [service|handler] [dist root, default this checkout]
// BENCH_USER_PATH_REQUESTS: requests per run (default 40,000; the warm-up is half as many).
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { hs256, userJson, UUID } from './limits/handler-work.mjs';

const mode = process.argv[2] ?? 'service';
const root = process.argv[3] ?? fileURLToPath(new URL('..', import.meta.url));
const load = (path) => import(`${root}/dist/${path}`);
const { loadConfig } = await load('server/config/load.js');
const { Router } = await load('server/http/router.js');
const { ROUTES } = await load('server/routes.js');
const { createJwtService } = await load('server/auth/jwt.js');
const { NO_REQUEST_METRICS } = await load('server/observability/metrics.js');
const { createLogger } = await load('server/observability/log.js');
const { serialise, withTimeout, Deadline } = await load('server/http/answer.js');
const { recordRequest } = await load('server/http/request-record.js');
const { corsHeaders } = await load('server/http/cors.js');
const { createRedirectCheck } = await load('server/http/redirect-target.js');

const secret = 'x'.repeat(64);
const env = {
  AUTH_DB_DRIVER: 'postgres',
  DATABASE_URL: 'postgres://bench@127.0.0.1/bench',
  AUTH_JWT_SECRET: secret,
  AUTH_JWT_AUD: 'authenticated',
  AUTH_JWT_DEFAULT_GROUP_NAME: 'authenticated',
  AUTH_SITE_URL: 'http://localhost:3000',
  AUTH_API_EXTERNAL_URL: 'http://127.0.0.1:1',
  AUTH_LOG_FILE: '/dev/null',
};
const config = loadConfig({ env, envFile: '/nonexistent' });
const log = createLogger(config.log);
const jwt = createJwtService(config.jwt);
const userId = '6f1c1a52-8a3e-4a43-9a5e-1f2b3c4d5e6f';
const sessionId = '7a1c1a52-8a3e-4a43-9a5e-1f2b3c4d5e6f';
const now = Math.floor(Date.now() / 1000);
const token = await jwt.sign({
  sub: userId,
  aud: 'authenticated',
  exp: now + 3600,
  iat: now,
  email: 'a@example.com',
  phone: '',
  app_metadata: { provider: 'email', providers: ['email'] },
  user_metadata: {},
  role: 'authenticated',
  aal: 'aal1',
  amr: [{ method: 'password', timestamp: now }],
  session_id: sessionId,
  is_anonymous: false,
});
const headers = { host: '127.0.0.1:1234', authorization: `Bearer ${token}`, connection: 'keep-alive' };

// As the pool's parser makes them (src/db/timestamps.ts): Dates that keep their microseconds. A build
// from before that parser (an A/B run against an older dist root) gets plain Dates, as its pg did.
const { DbTimestamp } = await load('db/timestamps.js').catch(() => ({ DbTimestamp: null }));
const date = DbTimestamp ? () => new DbTimestamp(Date.now() - 1000, 456) : () => new Date(Date.now() - 1000);
/** A row as pg hands the statement's result over (USER_COLUMNS with Dates, the session id, the json columns). */
// prettier-ignore
const row = () => ({
  id: userId, aud: 'authenticated', role: 'authenticated', email: 'a@example.com', phone: null,
  encrypted_password: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA', email_confirmed_at: date(),
  phone_confirmed_at: null, confirmed_at: date(), invited_at: null, confirmation_sent_at: null, recovery_sent_at: null,
  email_change: '', email_change_sent_at: null, email_change_confirm_status: 0, phone_change: '',
  phone_change_sent_at: null, reauthentication_sent_at: null, last_sign_in_at: date(),
  raw_app_meta_data: { provider: 'email', providers: ['email'] }, raw_user_meta_data: {}, banned_until: null,
  deleted_at: null, is_anonymous: false, is_sso_user: false, created_at: date(), updated_at: date(),
  found_session_id: sessionId,
  found_identities: [
    {
      id: '8a1c1a52-8a3e-4a43-9a5e-1f2b3c4d5e6f', provider_id: userId, user_id: userId,
      identity_data: { sub: userId, email: 'a@example.com', email_verified: false, phone_verified: false },
      provider: 'email', email: 'a@example.com', last_sign_in_at: '2026-11-22 10:00:00.123456+00',
      created_at: '2026-11-22 10:00:00.123456+00', updated_at: '2026-11-22 10:00:00.123456+00',
    },
  ],
  found_factors: [],
});
const db = { query: () => new Promise((resolve) => setImmediate(() => resolve({ rows: [row()] }))) };
const ctx = { config, log, db, jwt, metrics: NO_REQUEST_METRICS, tracing: { enabled: false }, redirect: createRedirectCheck(config) };
const router = new Router(ROUTES);

/** What server.ts does for GET /user between the snapshot and the write. */
function service() {
  const started = performance.now();
  const match = router.match('GET', '/user');
  const deadline = new Deadline();
  const cors = corsHeaders(headers.origin);
  const requestId = randomUUID();
  // prettier-ignore
  const req = {
    method: 'GET', path: '/user', route: match.route.path, params: match.params, headers, ip: '127.0.0.1', requestId,
    rawBody: Buffer.alloc(0), query: new URLSearchParams(''), get signal() { return deadline.signal; },
    json: () => ({}), body: () => ({}),
  };
  return withTimeout(Promise.resolve(match.run(req, ctx)), 10_000, deadline)
    .then((response) => serialise(response, cors))
    .then((a) => {
      if (a.status !== 200) throw new Error(`answered ${a.status}: ${a.body}`);
      // prettier-ignore
      recordRequest(ctx, log, {
        requestId, method: 'GET', path: '/user', query: '', headers, ip: '127.0.0.1', route: match.route,
        params: match.params, status: a.status, errorCode: undefined, error: undefined, aborted: false, spans: undefined,
        started,
      });
    });
}

// The minimal handler's JavaScript: the same module bench/limits/handler-thread.mjs runs.
const { verify } = hs256(secret);
function handler() {
  const auth = headers.authorization;
  const claims = auth.startsWith('Bearer ') ? verify(auth.slice(7)) : null;
  if (!claims || !UUID.test(claims.sub) || !UUID.test(claims.session_id)) throw new Error('refused');
  return db.query({ values: [claims.sub, claims.session_id] }).then(({ rows: [r] }) => {
    if (!r || !r.found_session_id || (r.banned_until && r.banned_until > new Date())) throw new Error('refused');
    return JSON.stringify(userJson(r, r.found_identities, r.found_factors));
  });
}

const one = mode === 'handler' ? handler : service;
async function run(n, inFlight) {
  let done = 0;
  const before = process.cpuUsage();
  await new Promise((resolve, reject) => {
    const next = () => one().then(() => (++done === n ? resolve() : done + inFlight <= n && next()), reject);
    for (let i = 0; i < inFlight; i++) next();
  });
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}
const requests = Number(process.env.BENCH_USER_PATH_REQUESTS ?? 40_000);
await run(Math.ceil(requests / 2), 32); // warm-up
const runs = [];
for (let i = 0; i < 5; i++) runs.push(await run(requests, 32));
console.log(`${mode}: µs of CPU per request, 5 runs: ${runs.map((r) => r.toFixed(1)).join(' ')}; best ${Math.min(...runs).toFixed(1)}`);
process.exit(0);
