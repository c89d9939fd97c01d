// The credential a client sends back (the JSON form of a PublicKeyCredential, as @supabase/auth-js serialises
// it) checked for shape before the library reads it, so malformed input is "Invalid credential response"
// and only a well-formed response that fails the ceremony is "Credential verification failed". Shape as the
// original's library parses it before verifying anything: clientDataJSON a JSON object, authenticator data
// that parses (a new credential's carrying its attested credential data), an attestation object in CBOR,
// and a new credential's ID (attested and rawId) no longer than the 1023 bytes WebAuthn allows.
// The library's parsers load with the first ceremony, not when an HTTP thread starts (docs/architecture.md#threads).
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';

const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;
/**
 * The longest credential ID WebAuthn allows (credentialIdLength, §6.5.1), which a relying party must refuse
 * at registration (§7.1): the library does not, and the attested ID is what the credential is stored under.
 */
const MAX_CREDENTIAL_ID_BYTES = 1023;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isB64 = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && BASE64URL.test(v);

function common(v: unknown): v is { id: string; rawId: string; type: string; response: Record<string, unknown> } {
  if (!isObject(v) || !isB64(v.id) || !isB64(v.rawId) || v.type !== 'public-key' || !isObject(v.response)) return false;
  const clientData = v.response.clientDataJSON;
  return isB64(clientData) && isObject(parsedOrNull((): unknown => JSON.parse(Buffer.from(clientData, 'base64url').toString('utf8'))));
}

const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64url'));

/** What `read` returns, or null when it throws (the libraries' parsers throw on malformed input). */
function parsedOrNull<T>(read: () => T): T | null {
  try {
    return read();
  } catch {
    return null;
  }
}

type Helpers = typeof import('@simplewebauthn/server/helpers');
const helpers = (): Promise<Helpers> => import('@simplewebauthn/server/helpers');

type AuthenticatorData = ReturnType<Helpers['parseAuthenticatorData']>;

/** Authenticator data that parses: at least 37 bytes, its flags matching what follows; `attested`: a new credential's. */
function parsedAuthenticatorData(lib: Helpers, data: Uint8Array<ArrayBuffer>, attested: boolean): AuthenticatorData | null {
  if (data.length < 37) return null;
  const parsed = parsedOrNull(() => lib.parseAuthenticatorData(data));
  return parsed !== null && (!attested || parsed.flags.at) ? parsed : null;
}

export async function asRegistrationResponse(v: unknown): Promise<RegistrationResponseJSON | null> {
  if (!common(v) || !isB64(v.response.attestationObject)) return null;
  const attestation = v.response.attestationObject;
  const lib = await helpers();
  const authData = parsedOrNull(() => new Uint8Array(lib.decodeAttestationObject(bytes(attestation)).get('authData')));
  const parsed = authData && parsedAuthenticatorData(lib, authData, true);
  if (!parsed?.credentialID || parsed.credentialID.length > MAX_CREDENTIAL_ID_BYTES) return null;
  if (bytes(v.rawId).length > MAX_CREDENTIAL_ID_BYTES) return null;
  const transports = v.response.transports;
  if (transports !== undefined && !(Array.isArray(transports) && transports.every((t) => typeof t === 'string'))) return null;
  return { clientExtensionResults: {}, ...v } as unknown as RegistrationResponseJSON;
}

export async function asAuthenticationResponse(v: unknown): Promise<AuthenticationResponseJSON | null> {
  if (!common(v) || !isB64(v.response.authenticatorData) || !isB64(v.response.signature)) return null;
  if (!parsedAuthenticatorData(await helpers(), bytes(v.response.authenticatorData), false)) return null;
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
