// One thread of the minimal-handler limit: a bare uWS App (the service's uWS build) that does an
// endpoint's work and nothing else: no router, request snapshot, log line, metrics or error table.
// GET /user verifies the HS256 bearer with node:crypto, runs the statement GET /user runs (captured from
// dist/db, so it follows the code) through a pg pool made as an HTTP thread makes its own, and writes the
// user JSON. POST /token (refresh) hashes the presented token, runs the grant's two usual-path statements
// (dist/db), derives the child token as the service does, signs an HS256 access token with node:crypto and writes the token response.
import { parentPort, workerData } from 'node:worker_threads';
import { createHash, randomUUID } from 'node:crypto';
import uWS from '@trufflesuite/uws-js-unofficial';
import { hs256, userJson, UUID } from './handler-work.mjs';
import { createPool } from '../../dist/db/pool.js';
import { findUserSessionIdentities } from '../../dist/db/user-session.js';
import { findPresentedToken } from '../../dist/db/refresh-tokens.js';
import { lockAndRotate } from '../../dist/db/refresh-rotation.js';
import { childRefreshToken } from '../../dist/server/sessions/child-token.js';

const { port, databaseUrl, namespace, poolSize, secret } = workerData;
const pool = createPool({ url: databaseUrl, max: poolSize, namespace, applicationName: 'portcullis-bench-handler' });
const { verify, sign } = hs256(secret);

/** The statement GET /user runs, as dist/db/user-session.js sends it (no session policy in the bench). */
let userStatement;
await findUserSessionIdentities(
  {
    query: (config) => {
      userStatement = config;
      return { rows: [] };
    },
  },
  '00000000-0000-0000-0000-000000000000',
  null,
);

function reply(res, status, body) {
  if (res.aborted) return;
  res.cork(() => {
    res.writeStatus(status);
    res.writeHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(body));
  });
}

const app = uWS.App();
app.get('/user', (res, req) => {
  res.onAborted(() => (res.aborted = true));
  const auth = req.getHeader('authorization');
  const claims = auth.startsWith('Bearer ') ? verify(auth.slice(7)) : null;
  if (!claims || !UUID.test(claims.sub) || !UUID.test(claims.session_id)) return reply(res, '403 Forbidden', { code: 403 });
  pool.query({ ...userStatement, values: [claims.sub, claims.session_id] }).then(
    ({ rows: [row] }) => {
      if (!row || !row.found_session_id || (row.banned_until && row.banned_until > new Date()))
        return reply(res, '403 Forbidden', { code: 403 });
      reply(res, '200 OK', userJson(row, row.found_identities, row.found_factors));
    },
    () => reply(res, '500 Internal Server Error', { code: 500 }),
  );
});
app.post('/token', (res) => {
  res.onAborted(() => (res.aborted = true));
  const chunks = [];
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (last) refresh(res, Buffer.concat(chunks)).catch(() => reply(res, '500 Internal Server Error', { code: 500 }));
  });
});

async function refresh(res, raw) {
  const presented = JSON.parse(raw.toString()).refresh_token;
  const found = await findPresentedToken(pool, createHash('sha256').update(presented).digest('hex'));
  // The child is derived from the parent as the service derives it, so that a chain whose answer was cut
  // off at the end of a slice (autocannon stops mid-request) is answered its existing child next time.
  const child = childRefreshToken(secret, presented);
  const childHash = createHash('sha256').update(child).digest('hex');
  if (found?.revoked && found.active_parent_id === found.id && found.active_hash === childHash) {
    return reply(res, '200 OK', { refresh_token: child });
  }
  if (!found || found.revoked) return refuse(res, found ? 'revoked' : 'not found');
  // The rows the grant audits: the same entries (auditEntry in dist/db/audit-log.js: id, payload, address).
  const audit = ['token_revoked', 'token_refreshed'].map((action) => ({
    id: randomUUID(),
    payload: {
      actor_id: found.user_id,
      actor_via_sso: false,
      actor_username: found.email ?? found.phone ?? '',
      action,
      log_type: 'token',
    },
    ip: '',
  }));
  const rotated = await lockAndRotate(pool, {
    parentId: found.id,
    sessionId: found.session_id,
    childHash,
    client: { userAgent: '', ip: '127.0.0.1' },
    audit,
    now: new Date(),
  });
  if (!rotated) return refuse(res, 'not rotated');
  const u = rotated.user;
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    sub: u.id,
    aud: u.aud,
    exp: now + 3600,
    iat: now,
    email: u.email ?? '',
    phone: u.phone ?? '',
    app_metadata: u.raw_app_meta_data,
    user_metadata: u.raw_user_meta_data,
    role: u.role,
    aal: 'aal1',
    amr: rotated.amr,
    session_id: found.session_id,
    is_anonymous: u.is_anonymous,
  };
  reply(res, '200 OK', {
    access_token: sign(claims),
    token_type: 'bearer',
    expires_in: 3600,
    expires_at: claims.exp,
    refresh_token: child,
    user: userJson(u, rotated.identities, rotated.factors),
  });
}

/** A refusal: the bench's chains should never see one, so the first few are told on stderr. */
let refusals = 0;
function refuse(res, why) {
  if (refusals++ < 3) console.error(`minimal handler: refresh refused: ${why}`);
  reply(res, '400 Bad Request', { code: 400, msg: why });
}

let listening = null;
app.listen('127.0.0.1', port, (socket) => {
  listening = socket;
  parentPort.postMessage(socket ? { type: 'listening' } : { type: 'failed' });
});
parentPort.once('message', async () => {
  if (listening) uWS.us_listen_socket_close(listening);
  app.close();
  await pool.end();
  parentPort.close();
});
