// Bearer tokens signed with the test service's JWT secret, as an operator or an application mints them:
// any claims (signedToken), or an admin API key, a service_role key carrying a role and no sub (adminToken).
import { SignJWT } from 'jose';
import { JWT_SECRET } from './server.js';

/** An HS256 JWT of these claims, issued now and valid for an hour. */
export function signedToken(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));
}

export function adminToken(role = 'service_role', extra: Record<string, unknown> = {}): Promise<string> {
  return signedToken({ role, ...extra });
}

// GET /verify answers carry their session in the Location's fragment; one reader serves every test.
export { fragmentOf } from './passwordless.js';
