// Vercel Marketplace: authorization and token endpoints on api.vercel.com, the id_token issued by
// https://marketplace.vercel.com (its keys found by discovery). EXTERNAL_VERCEL_MARKETPLACE_URL replaces both
// hosts for tests.
// Vercel's id_tokens name the person in claims of their own (user_email, user_name, user_avatar_url), not
// the standard ones, and identify them across installations by global_user_id: the identity is
// `global_user_id:<id>` when that claim is present, as the original stores it, so identities made by the
// original are found again.
import { discoveredEndpoints, oidcProvider } from './oidc.js';
import { baseUrl } from './code-exchange.js';
import { claims as identityData, requireSubject, text } from './json-fields.js';
import type { ExternalProfile } from './types.js';

/** The person of a verified Vercel Marketplace id_token. */
export function vercelMarketplaceProfile(token: Record<string, unknown>): ExternalProfile {
  const globalId = text(token, 'global_user_id');
  const subject = globalId ? `global_user_id:${globalId}` : requireSubject(text(token, 'sub'), 'vercel_marketplace');
  const email = text(token, 'user_email');
  return {
    subject,
    // Vercel hands out only addresses it has verified; the original counts them verified.
    emails: email ? [{ email, verified: true, primary: true }] : [],
    ...(email ? {} : { addressless: true as const }),
    claims: identityData({
      iss: text(token, 'iss'),
      sub: subject,
      provider_id: subject,
      name: text(token, 'user_name'),
      picture: text(token, 'user_avatar_url'),
    }),
  };
}

export const vercelMarketplace = oidcProvider({
  name: 'vercel_marketplace',
  defaultScopes: [],
  async endpoints(rt) {
    const issuer = baseUrl(rt.config.url, 'https://marketplace.vercel.com');
    const api = baseUrl(rt.config.url, 'https://api.vercel.com');
    const found = await discoveredEndpoints(rt, issuer);
    // The person is read from the id_token only: an answer without one is refused, never completed from
    // userinfo, whose claims are not the ones this mapping reads.
    return { ...found, userinfo: undefined, authorization: `${api}/oauth/v2/authorization`, token: `${api}/oauth/v2/accessToken` };
  },
  profile: vercelMarketplaceProfile,
});
