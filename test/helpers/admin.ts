// Bearer tokens for the admin API, minted as an operator's service_role key is: an HS256 JWT signed with
// the service's JWT secret, carrying a role and no sub.
import { SignJWT } from 'jose';
import { JWT_SECRET } from './server.js';

export async function adminToken(role = 'service_role', extra: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({ role, ...extra })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));
}

// GET /verify answers carry their session in the Location's fragment; one reader serves every test.
export { fragmentOf } from './passwordless.js';
