// A factor on the wire (docs/mfa.md#factor-json): the user's `factors`, the admin factor list. The
// original's field set; the secret and WebAuthn credential never leave the database layer (the last
// ceremony does, as in the original: it holds no key).
import type { FactorRow } from '../../db/mfa-factors.js';
import { rfc3339Nano } from '../../db/timestamps.js';

export function factorJson(f: FactorRow): Record<string, unknown> {
  const json: Record<string, unknown> = {
    id: f.id,
    created_at: rfc3339Nano(f.created_at),
    updated_at: rfc3339Nano(f.updated_at),
    status: f.status,
  };
  if (f.friendly_name) json.friendly_name = f.friendly_name;
  json.factor_type = f.factor_type;
  json.phone = f.phone ?? '';
  json.last_challenged_at = f.last_challenged_at ? rfc3339Nano(f.last_challenged_at) : null;
  if (f.web_authn_aaguid) json.web_authn_aaguid = f.web_authn_aaguid;
  // The last successful WebAuthn ceremony, shown as the original shows it (absent until there is one).
  if (f.last_webauthn_challenge_data) json.last_webauthn_challenge_data = f.last_webauthn_challenge_data;
  return json;
}
