// A custom provider's claims made into a profile (docs/custom-providers.md#signing-in): attribute_mapping
// first (a string names the provider claim to copy, anything else is set as is), then the standard
// identity_data of providers/oidc.ts, whose custom_claims is replaced by the allowlisted claims alone.
// (The id_token grant applies neither, as the original: it reads the standard claims only, oidc.ts standardProfile.)
import { standardProfile } from '../providers/oidc.js';
import type { ExternalProfile } from '../providers/types.js';
import type { CustomProviderRow } from '../../db/custom-oauth-providers.js';

export function customProfile(row: CustomProviderRow, raw: Record<string, unknown>): ExternalProfile {
  const mapped: Record<string, unknown> = { ...raw };
  for (const [target, source] of Object.entries(row.attribute_mapping)) {
    if (typeof source !== 'string') mapped[target] = source;
    else if (raw[source] !== undefined) mapped[target] = raw[source];
  }
  const profile = standardProfile(mapped);
  const allowed = row.custom_claims_allowlist.filter((key) => raw[key] !== undefined);
  if (allowed.length === 0) return profile;
  return { ...profile, claims: { ...profile.claims, custom_claims: Object.fromEntries(allowed.map((key) => [key, raw[key]])) } };
}
