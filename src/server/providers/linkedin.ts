// LinkedIn's legacy "Sign In with LinkedIn" (r_liteprofile + r_emailaddress; LinkedIn now steers new apps
// to linkedin_oidc). The name is the localized one for the member's preferred locale; the address comes
// from the emailAddress API and counts as verified (LinkedIn only hands out confirmed primary addresses).
import { baseUrl } from './base-url.js';
import { at, claims, list, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { OAuth2Provider, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const api = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'api.linkedin.com');

/** `{localized: {en_US: "Ada"}, preferredLocale: {language: "en", country: "US"}}` → "Ada". */
function localizedName(name: unknown): string {
  const locale = `${text(name, 'preferredLocale', 'language')}_${text(name, 'preferredLocale', 'country')}`;
  return text(at(name, 'localized'), locale);
}

export const linkedin: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'linkedin',
  defaultScopes: ['r_emailaddress', 'r_liteprofile'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${api(rt)}/oauth/v2/authorization`),
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${api(rt)}/oauth/v2/accessToken`, code, credentials: 'body' }),
  async fetchProfile(rt, tokens) {
    const me = await getUserJson(
      rt,
      `${api(rt)}/v2/me?projection=(id,firstName,lastName,profilePicture(displayImage~:playableStreams))`,
      tokens.accessToken,
    );
    const addresses = await getUserJson(rt, `${api(rt)}/v2/emailAddress?q=members&projection=(elements*(handle~))`, tokens.accessToken);
    const subject = requireSubject(text(me, 'id'), 'linkedin');
    const email = text(list(addresses, 'elements')[0], 'handle~', 'emailAddress');
    const fullName = `${localizedName(at(me, 'firstName'))} ${localizedName(at(me, 'lastName'))}`.trim();
    const image = list(me, 'profilePicture', 'displayImage~', 'elements')[0];
    const avatar = text(list(image, 'identifiers')[0], 'identifier');
    return {
      subject,
      emails: email ? [{ email, verified: true, primary: true }] : [],
      claims: claims({
        iss: api(rt),
        sub: subject,
        name: fullName,
        picture: avatar,
        email,
        email_verified: true,
        avatar_url: avatar,
        full_name: fullName,
        provider_id: subject,
      }),
    };
  },
};
