// A passkey on the wire (GET /passkeys, the admin list, PATCH): id, friendly_name and last_used_at only when
// set, in the original's field order. Never the credential id or the public key.
import type { WebAuthnCredentialRow } from '../../db/webauthn-credentials.js';
import { rfc3339Nano } from '../../db/timestamps.js';

export function passkeyJson(row: WebAuthnCredentialRow): Record<string, unknown> {
  const out: Record<string, unknown> = { id: row.id };
  if (row.friendly_name) out.friendly_name = row.friendly_name;
  out.created_at = rfc3339Nano(row.created_at);
  if (row.last_used_at) out.last_used_at = rfc3339Nano(row.last_used_at);
  return out;
}

/** The answer of a registration: the new passkey without last_used_at. */
export function createdPasskeyJson(row: WebAuthnCredentialRow): Record<string, unknown> {
  const out: Record<string, unknown> = { id: row.id };
  if (row.friendly_name) out.friendly_name = row.friendly_name;
  out.created_at = rfc3339Nano(row.created_at);
  return out;
}
