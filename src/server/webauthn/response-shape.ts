// The credential a client sends back (the JSON form of a PublicKeyCredential, as @supabase/auth-js serialises
// it) checked for shape before the library reads it, so malformed input is "Invalid credential response"
// and only a well-formed response that fails the ceremony is "Credential verification failed".
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isB64 = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && BASE64URL.test(v);

function common(v: unknown): v is { id: string; rawId: string; type: string; response: Record<string, unknown> } {
  return (
    isObject(v) && isB64(v.id) && isB64(v.rawId) && v.type === 'public-key' && isObject(v.response) && isB64(v.response.clientDataJSON)
  );
}

export function asRegistrationResponse(v: unknown): RegistrationResponseJSON | null {
  if (!common(v) || !isB64(v.response.attestationObject)) return null;
  const transports = v.response.transports;
  if (transports !== undefined && !(Array.isArray(transports) && transports.every((t) => typeof t === 'string'))) return null;
  return { clientExtensionResults: {}, ...v } as unknown as RegistrationResponseJSON;
}

export function asAuthenticationResponse(v: unknown): AuthenticationResponseJSON | null {
  if (!common(v) || !isB64(v.response.authenticatorData) || !isB64(v.response.signature)) return null;
  const handle = v.response.userHandle;
  if (handle !== undefined && handle !== null && typeof handle !== 'string') return null;
  return { clientExtensionResults: {}, ...v } as unknown as AuthenticationResponseJSON;
}

/** The user handle of an assertion as text (this service's handles are user ids), or null. */
export function userHandleOf(response: AuthenticationResponseJSON): string | null {
  const handle = response.response.userHandle;
  if (!handle || !BASE64URL.test(handle)) return null;
  return Buffer.from(handle, 'base64url').toString('utf8');
}
