// The original reads a verified id_token by the issuer it names, whichever way it came (a built-in
// provider, a custom one, an allowed issuer): Google's, Apple's, Azure's, LinkedIn's, Kakao's, Vercel
// Marketplace's, Facebook's and Snapchat's tokens by their provider's reader, every other issuer's as the
// standard claims. So a custom provider whose issuer is Google's has its tokens read as Google's are.
import type { OAuthProviderName } from '../config/types.js';
import type { ExternalProfile } from './types.js';
import { idTokenProvider } from './index.js';
import { APPLE_ISSUERS } from './apple.js';
import { TENANT_ISSUER } from './azure-issuers.js';

/** The single fixed issuer of each provider that has one, as the original knows them. */
export const WELL_KNOWN_ISSUER: Readonly<Partial<Record<OAuthProviderName, string>>> = {
  google: 'https://accounts.google.com',
  facebook: 'https://www.facebook.com',
  kakao: 'https://kauth.kakao.com',
  vercel_marketplace: 'https://marketplace.vercel.com',
  snapchat: 'https://accounts.snapchat.com/accounts/oauth2/token',
  linkedin_oidc: 'https://www.linkedin.com/oauth',
};

const OWNERS: readonly [OAuthProviderName, (issuer: string) => boolean][] = [
  ['apple', (i) => (APPLE_ISSUERS as readonly string[]).includes(i)],
  ['azure', (i) => TENANT_ISSUER.test(i)],
  ...Object.entries(WELL_KNOWN_ISSUER).map(([name, known]): [OAuthProviderName, (i: string) => boolean] => [
    name as OAuthProviderName,
    (i) => i === known,
  ]),
];

/** The built-in provider whose reader the original applies to a token of `issuer`; null: the standard claims. */
export function readerOfIssuer(issuer: string): OAuthProviderName | null {
  return OWNERS.find(([, owns]) => owns(issuer))?.[0] ?? null;
}

/** The reader of the built-in provider owning `issuer`, by its name; null for the standard claims. */
export function issuerReader(
  issuer: string,
): { name: OAuthProviderName; profile: (claims: Record<string, unknown>) => ExternalProfile } | null {
  const name = readerOfIssuer(issuer);
  const module = name ? idTokenProvider(name) : undefined;
  return name && module ? { name, profile: (claims) => module.profile(claims) } : null;
}
