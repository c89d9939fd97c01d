// The id_token side of a provider that is not an OIDC-family module but whose SDKs hand out signed JWTs the
// id_token grant accepts (facebook's Limited Login, kakao): a fixed issuer and JWKS (both under the
// provider's base, so EXTERNAL_<PROVIDER>_URL moves them for a test) and the provider's own claim mapping.
import { acceptedAudiences, type OidcEndpoints, type OidcProvider, type VerifyOptions } from './oidc.js';
import type { ExternalProfile, ProviderRuntime } from './types.js';

/** What providers/index.ts idTokenProvider() looks for on a module. */
export type IdTokenSide = Pick<OidcProvider, 'endpoints' | 'verify' | 'profile'>;

export interface IdTokenDefinition {
  /** every endpoint of this configuration; `issuer` is the one `iss` a token may name */
  endpoints(rt: ProviderRuntime): OidcEndpoints & { issuer: string };
  profile(claims: Record<string, unknown>): ExternalProfile;
}

export function idTokenSide(def: IdTokenDefinition): IdTokenSide {
  return {
    endpoints: (rt) => Promise.resolve(def.endpoints(rt)),
    verify(rt, idToken, options: VerifyOptions = {}) {
      const { issuer, jwksUri } = def.endpoints(rt);
      return rt.verifyIdToken(idToken, { issuer, audience: acceptedAudiences(rt, options), jwksUri, nonceHash: options.nonceHash });
    },
    profile: (claims) => def.profile(claims),
  };
}
