// Microsoft Entra ID (Azure): the v2.0 endpoints under a tenant base, default
// https://login.microsoftonline.com/common; EXTERNAL_AZURE_URL is the tenant base (REFERENCE §9.2).
// Which issuers a token may name, and whose keys check it, is azure-issuers.ts.
import { oidcProvider } from './oidc.js';
import { azureBase as base, azureTrust } from './azure-issuers.js';
import { claims as present, requireSubject, text } from './json-fields.js';
import { decodeFields, REGISTERED_CLAIMS, stringFields, type FieldTypes } from './go-json-fields.js';
import { ProviderError } from './outbound.js';
import type { ExternalProfile } from './types.js';

/**
 * The original's struct for an Entra id_token (xms_edov is of any type there): a claim of another type
 * fails the sign-in (go-json-fields.ts). custom_claims is read from the token as a map, names as they are.
 */
export const AZURE_FIELDS: FieldTypes = { ...REGISTERED_CLAIMS, ...stringFields('email', 'name', 'preferred_username') };

/** The token's bookkeeping, which the original leaves out of custom_claims (sub, name, preferred_username are on top). */
const NOT_CUSTOM = new Set([
  'aud',
  'iss',
  'iat',
  'nbf',
  'exp',
  'c_hash',
  'at_hash',
  'aio',
  'nonce',
  'rh',
  'uti',
  'jti',
  'ver',
  'sub',
  'name',
  'preferred_username',
]);

/**
 * Whether Entra's address counts as verified, by the original's rule: with the optional claim xms_edov
 * (email domain owner verified) present, only its true values count (Entra sends it as true, "1" or
 * "true"); without it, the claim is merely not configured and the address is taken as verified. The
 * standard email_verified claim is not consulted: Entra does not send it.
 */
export function azureEmailVerified(claims: Record<string, unknown>): boolean {
  if (typeof claims.email !== 'string' || !claims.email) return false;
  const edov = claims.xms_edov;
  if (edov === undefined || edov === null) return true;
  return edov === true || edov === '1' || edov === 'true';
}

/**
 * identity_data laid out as the original lays out an Entra token: iss, sub, provider_id,
 * preferred_username and full_name (from `name`; no top-level `name`) on top, with the address and its
 * verification, and every other claim (email, given_name, family_name, oid, tid, sid, auth_time,
 * xms_edov...) under custom_claims, which apps read Entra's claims from.
 */
export function azureProfile(token: Record<string, unknown>): ExternalProfile {
  const { claims, misfit } = decodeFields(token, AZURE_FIELDS);
  if (misfit) throw new ProviderError(`azure: claim ${misfit} is not of the type the original reads it as`);
  const subject = requireSubject(text(claims, 'sub'), 'azure');
  const email = text(claims, 'email');
  const verified = azureEmailVerified(claims);
  // From the token as it came: the original reads custom_claims as a map, its keys as the token spells them.
  const custom = Object.fromEntries(Object.entries(token).filter(([k, v]) => !NOT_CUSTOM.has(k) && v !== undefined));
  return {
    subject,
    emails: email ? [{ email, verified, primary: true }] : [],
    claims: {
      ...present({
        iss: text(claims, 'iss'),
        sub: subject,
        provider_id: subject,
        preferred_username: text(claims, 'preferred_username'),
        full_name: text(claims, 'name'),
        email,
        email_verified: email ? verified : undefined,
      }),
      custom_claims: custom,
    },
  };
}

export const azure = oidcProvider({
  name: 'azure',
  // The original asks for `openid` alone: the address needs `scopes=email` (or the optional claim).
  defaultScopes: ['openid'],
  endpoints(rt) {
    return Promise.resolve({
      // Per token by azureTrust; the configured base's own issuer and keys otherwise.
      issuer: `${base(rt)}/v2.0`,
      authorization: `${base(rt)}/oauth2/v2.0/authorize`,
      token: `${base(rt)}/oauth2/v2.0/token`,
      jwksUri: `${base(rt)}/discovery/v2.0/keys`,
    });
  },
  trustOf: azureTrust,
  profile: azureProfile,
});
