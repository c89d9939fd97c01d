// LinkedIn's OpenID Connect product: discovery of the issuer https://www.linkedin.com/oauth
// (EXTERNAL_LINKEDIN_OIDC_URL replaces it for tests).
import { discoveredEndpoints, oidcProvider } from './oidc.js';
import { ProviderError } from './outbound.js';
import type { ExternalProfile } from './types.js';

/** Go's strconv.ParseBool spellings of true, as the original reads LinkedIn's email_verified. */
const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/**
 * identity_data of a LinkedIn id_token, as the original's LinkedIn reader keeps it: the issuer, the
 * subject, the name made of the given and family names, those two, the member's locale and picture —
 * not full_name or avatar_url. The address and its flag are added by the sign-in (oauth/linking.ts).
 */
export function linkedinProfile(claims: Record<string, unknown>): ExternalProfile {
  const str = (k: string) => {
    const v = claims[k];
    return typeof v === 'string' && v ? v : undefined;
  };
  const sub = str('sub');
  if (!sub) throw new ProviderError('the provider named no subject');
  const givenName = str('given_name');
  const familyName = str('family_name');
  const email = str('email');
  const verified = claims.email_verified === true || GO_TRUE.has(String(claims.email_verified));
  const data: Record<string, unknown> = {
    iss: str('iss'),
    sub,
    provider_id: sub,
    name: `${givenName ?? ''} ${familyName ?? ''}`.trim() || undefined,
    given_name: givenName,
    family_name: familyName,
    locale: str('locale'),
    picture: str('picture'),
  };
  return {
    subject: sub,
    emails: email ? [{ email, verified, primary: true }] : [],
    claims: Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)),
  };
}

export const linkedinOidc = oidcProvider({
  name: 'linkedin_oidc',
  defaultScopes: ['openid', 'email', 'profile'],
  endpoints: (rt) => discoveredEndpoints(rt, rt.config.url || 'https://www.linkedin.com/oauth'),
  profile: linkedinProfile,
});
