// TOTP codes computed the way an authenticator app does (the otpauth library), and the MFA calls the
// tests make over HTTP.
import { Secret, TOTP } from 'otpauth';
import { decodeJwt } from 'jose';
import type { TestService } from './server.js';

/** The 6-digit code of a base32 secret at `timestamp` (ms, default now). */
export function totpCode(secret: string, timestamp = Date.now()): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp });
}

export const claimsOf = (accessToken: string) => decodeJwt(accessToken) as Record<string, any>;

export async function enrollTotp(api: TestService, token: string, friendlyName?: string) {
  const res = await api.request('POST', '/factors', { token, body: { factor_type: 'totp', friendly_name: friendlyName } });
  if (res.status !== 200) throw new Error(`enroll failed: ${res.status} ${res.text}`);
  return res.body as { id: string; type: string; friendly_name: string; totp: { qr_code: string; secret: string; uri: string } };
}

export async function challenge(api: TestService, token: string, factorId: string, body: Record<string, unknown> = {}) {
  return api.request('POST', `/factors/${factorId}/challenge`, { token, body });
}

export async function verify(api: TestService, token: string, factorId: string, challengeId: string, code: string) {
  return api.request('POST', `/factors/${factorId}/verify`, { token, body: { challenge_id: challengeId, code } });
}

/** Enrols a TOTP factor and verifies it: the answer is the aal2 token response; the secret comes with it. */
export async function verifiedTotp(api: TestService, token: string, friendlyName?: string) {
  const factor = await enrollTotp(api, token, friendlyName);
  const c = await challenge(api, token, factor.id);
  const v = await verify(api, token, factor.id, c.body.id, totpCode(factor.totp.secret));
  if (v.status !== 200) throw new Error(`verify failed: ${v.status} ${v.text}`);
  return { factor, session: v.body as { access_token: string; refresh_token: string; user: any } };
}
