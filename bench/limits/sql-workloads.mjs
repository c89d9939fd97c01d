// The SQL each endpoint runs, driven directly: the service's own statement functions from dist/db, each
// of which is one whole statement (so the limit follows the code), called as the endpoint calls them,
// without HTTP, JSON, JWTs or hashing. Each workload is prepare(pool, fixture, loop) → one call = the
// statements of one request.
import { randomBytes } from 'node:crypto';
import { tx } from '../../dist/db/pool.js';
import { findUserByEmail } from '../../dist/db/users.js';
import { findUserSessionIdentities } from '../../dist/db/user-session.js';
import { auditEntry } from '../../dist/db/audit-log.js';
import { signIn } from '../../dist/db/sign-in.js';
import { findPresentedToken } from '../../dist/db/refresh-tokens.js';
import { lockAndRotate } from '../../dist/db/refresh-rotation.js';
import { confirmAddress, createUser } from '../../dist/server/users/create.js';
import { actorOf } from '../../dist/server/users/actor.js';
import { sha256Hex } from '../../dist/server/crypto/tokens.js';

const newToken = () => randomBytes(9).toString('base64url');

/**
 * The refresh workload followed by the custom access token hook call the service makes on that grant,
 * through the service's own transport (dist/server/hooks/): `fixture.hook` is {kind: 'pg', qualifiedName,
 * uri} or {kind: 'http', url, secrets}; the payload is one of the size the service sends.
 */
function refreshWithHook() {
  return {
    async prepare(pool, fixture, loop) {
      const rotate = await WORKLOADS.refresh.prepare(pool, fixture, loop);
      const { callPgHook } = await import('../../dist/server/hooks/pg-transport.js');
      const { callHttpHook } = await import('../../dist/server/hooks/http-transport.js');
      const { hook } = fixture;
      const payload = JSON.stringify(fixture.hookPayload);
      const call =
        hook.kind === 'pg'
          ? () => callPgHook({ pool, qualifiedName: hook.qualifiedName, uri: hook.uri, payload })
          : () => callHttpHook({ url: hook.url, secrets: hook.secrets, payload });
      return async () => {
        await rotate();
        await call();
      };
    },
  };
}

export const WORKLOADS = {
  /** GET /user: one statement reads the user, the session and the user's identities. */
  user: {
    async prepare(pool, fixture, loop) {
      const { userId, sessionId } = fixture.sessions[loop % fixture.sessions.length];
      return async () => {
        await findUserSessionIdentities(pool, userId, sessionId);
      };
    },
  },
  /**
   * POST /token?grant_type=refresh_token on the grant's usual path (src/server/grants/refresh-token.ts,
   * rotateAtOnce): findPresentedToken, then lockAndRotate with the grant's own audit entries. Each loop
   * owns one session and presents its newest token, as each bench connection does.
   */
  refresh: {
    async prepare(pool, fixture, loop) {
      // On demand: a build without the grant skips token-refresh (bench/lib/refresh.mjs) and must still
      // load the other workloads.
      const { ownerOf, rotationAudit } = await import('../../dist/server/grants/refresh-token.js');
      const { userId } = fixture.users[loop % fixture.users.length];
      // The session a password login creates, by the statement the service runs for it.
      let token = newToken();
      const { sessionId } = await signIn(pool, {
        userId,
        method: 'password',
        userAgent: 'bench',
        ip: '127.0.0.1',
        refreshTokenHash: sha256Hex(token),
      });
      return async () => {
        const found = await findPresentedToken(pool, sha256Hex(token));
        const child = newToken();
        const client = { userAgent: 'bench', ip: '127.0.0.1', request: null };
        const rotated = await lockAndRotate(pool, {
          parentId: found.id,
          sessionId: found.session_id,
          childHash: sha256Hex(child),
          client,
          audit: rotationAudit(client, ownerOf(found)),
          now: new Date(),
        });
        if (!rotated) throw new Error(`refresh workload: session ${sessionId} did not rotate`);
        token = child;
      };
    },
  },
  /**
   * POST /signup with autoconfirm: the calls of the sign-up transaction (signUp in
   * src/server/users/signup.ts, then issueSession) without the hash: findUserByEmail, createUser (user and
   * identity), confirmAddress, then signIn (session, refresh token, AMR, last sign-in, the user_signedup
   * audit entry, and the response's reads).
   */
  signup: {
    async prepare(pool, fixture, loop) {
      let n = 0;
      return async () => {
        const email = `sql-signup-${fixture.runId}-${loop}-${n++}@example.com`;
        await tx(pool, async (c) => {
          await findUserByEmail(c, email, fixture.aud);
          const { user } = await createUser(c, {
            provider: 'email',
            address: email,
            aud: fixture.aud,
            role: fixture.role,
            passwordHash: fixture.passwordHash,
            data: {},
            confirmed: false,
          });
          const confirmed = await confirmAddress(c, user, 'email');
          await signIn(c, {
            userId: confirmed.id,
            method: 'password',
            userAgent: 'bench',
            ip: '127.0.0.1',
            refreshTokenHash: sha256Hex(newToken()),
            audit: auditEntry(null, actorOf(user), 'user_signedup', { provider: 'email' }),
          });
        });
      };
    },
  },
  /** token-refresh-hook-pg / token-refresh-hook-http: the refresh statements, then the hook call. */
  'refresh-hook': refreshWithHook(),
};
