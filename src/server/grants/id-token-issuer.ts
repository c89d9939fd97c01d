// grant_type=id_token for Apple and Azure, whose tokens come from more than one issuer: the token's `iss` is
// read (unverified) before any key or discovery document is fetched and before the provider's switch is
// consulted, and the request is refused at once, as the original refuses it, when that issuer is not one of
// the provider's or differs from the `issuer` the client sent. The signature is checked later, against
// that issuer's keys (providers/apple.ts, providers/azure-issuers.ts).
import { apiError } from '../errors.js';
import { APPLE_ISSUERS } from '../providers/apple.js';
import { azureIssuerAccepted } from '../providers/azure-issuers.js';
import type { ProviderRuntime } from '../providers/types.js';

const TITLES = { apple: 'Apple', azure: 'Azure' } as const;

/** The issuer the token names, for a provider that has several; null for every other provider. */
export function detectedIssuer(provider: string, rt: ProviderRuntime, idToken: string, requested: string): string | null {
  if (provider !== 'apple' && provider !== 'azure') return null;
  const iss = issuerOf(idToken);
  if (iss === null) throw apiError('id_token_issuer_undetected', `Unable to detect issuer in ID token for ${TITLES[provider]} provider`);
  const ours = provider === 'apple' ? isAppleIssuer(rt, iss) : azureIssuerAccepted(rt, iss, 'grant');
  if (!ours) throw apiError(provider === 'apple' ? 'id_token_issuer_not_apple' : 'id_token_issuer_not_azure');
  if (requested && requested !== iss) throw apiError('id_token_issuer_mismatch');
  return iss;
}

/** Apple's two issuers, or EXTERNAL_APPLE_URL's own (a local stand-in for Apple: docs/differences.md). */
function isAppleIssuer(rt: ProviderRuntime, iss: string): boolean {
  const trim = (u: string) => u.replace(/\/+$/, '');
  return (APPLE_ISSUERS as readonly string[]).includes(iss) || (!!rt.config.url && trim(rt.config.url) === trim(iss));
}

/** The payload's `iss` ('' when absent); null when the token is not three parts with a JSON payload. */
function issuerOf(idToken: string): string | null {
  const parts = idToken.split('.');
  if (parts.length !== 3) return null;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return null;
    const iss = (payload as { iss?: unknown }).iss;
    if (iss === undefined || iss === null) return '';
    return typeof iss === 'string' ? iss : null;
  } catch {
    return null;
  }
}
