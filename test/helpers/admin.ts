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

/** The fragment parameters of a 303 Location (GET /verify answers). */
export function fragmentOf(location: string | null): Record<string, string> {
  if (!location) throw new Error('no Location header');
  return Object.fromEntries(new URLSearchParams(location.split('#')[1] ?? ''));
}
