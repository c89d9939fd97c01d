// The SQL each endpoint runs, driven directly: the service's own statement functions from dist/db (so the
// limit follows the code), without HTTP, JSON, JWTs or hashing. Each workload is prepare(pool, fixture,
// loop) → one call = the statements of one request, in the endpoint's order.
import { createHash, randomBytes } from 'node:crypto';
import { tx } from '../../dist/db/pool.js';
import { findUserByEmail } from '../../dist/db/users.js';
import { findUserSessionIdentities } from '../../dist/db/user-session.js';
import { auditPayload } from '../../dist/db/audit-log.js';
import { signIn } from '../../dist/db/sign-in.js';
import { confirmAddress, createUser } from '../../dist/server/users/create.js';
import { refreshStatements } from './refresh-statements.mjs';

const sha256Hex = (text) => createHash('sha256').update(text).digest('hex');
const newToken = () => randomBytes(9).toString('base64url');
const actor = (user) => ({ id: user.id, username: user.email ?? '' });

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
   * POST /token?grant_type=refresh_token: find the presented token, then one autocommit statement that
   * locks the session, rotates (auditing in the same statement) and returns the token response's user,
   * AMR and identities. Each loop owns one session and presents its newest token, as each bench
   * connection does.
   */
  refresh: {
    async prepare(pool, fixture, loop) {
      const sql = await refreshStatements();
      const { userId } = fixture.users[loop % fixture.users.length];
      // The session a password login creates, by the statement the service runs for it.
      let token = newToken();
      const { sessionId } = await signIn(pool, { userId, method: 'password', userAgent: 'bench', ip: '127.0.0.1',
        refreshTokenHash: sha256Hex(token), signedInAt: new Date() });
      const session = { id: sessionId };
      return async () => {
        const found = await sql.findPresentedToken(pool, sha256Hex(token));
        const child = newToken();
        if (!await sql.lockAndRotate(pool, found, sha256Hex(child), { userAgent: 'bench', ip: '127.0.0.1' })) {
          throw new Error(`refresh workload: session ${session.id} did not rotate`);
        }
        token = child;
      };
    },
  },
  /**
   * POST /signup with autoconfirm: the sign-up transaction (src/server/users/signup.ts) without the hash:
   * find, insert user and identity, confirm, then the sign-in statement (session, refresh token, AMR,
   * last sign-in, the user_signedup audit entry, and the response's reads).
   */
  signup: {
    async prepare(pool, fixture, loop) {
      let n = 0;
      return async () => {
        const email = `sql-signup-${fixture.runId}-${loop}-${n++}@example.com`;
        await tx(pool, async (c) => {
          await findUserByEmail(c, email, fixture.aud);
          const { user } = await createUser(c, { provider: 'email', address: email, aud: fixture.aud, role: fixture.role,
            passwordHash: fixture.passwordHash, data: {}, confirmed: false });
          const confirmed = await confirmAddress(c, user, 'email');
          await signIn(c, { userId: confirmed.id, method: 'password', userAgent: 'bench', ip: '127.0.0.1',
            refreshTokenHash: sha256Hex(newToken()), signedInAt: new Date(),
            audit: auditPayload(actor(user), 'user_signedup', { provider: 'email' }) });
        });
      };
    },
  },
};
