// The one OpenID Connect implementation the OIDC-family modules share (google, apple, azure, keycloak,
// linkedin_oidc, vercel_marketplace): endpoints from the issuer's discovery document (cached an hour) or
// fixed paths, the id_token verified against the issuer's JWKS, the profile read from its claims (and the
// userinfo endpoint when the id_token carries no email), normalised the way the original stores identity_data.
import type { ExternalEmail, ExternalProfile, OAuth2Provider, ProviderRuntime } from './types.js';
import type { OAuthProviderName } from '../config/types.js';
import { exchangeAuthorizationCode, fetchJson } from './code-exchange.js';
import { clientIds } from './configured.js';
import { ProviderError } from './outbound.js';
import { IdTokenError } from './runtime.js';
import { accessTokenHashMatches } from './at-hash.js';
import { scalarField } from './go-json-fields.js';

/** Where an OIDC provider's endpoints are: found by discovery, or fixed paths under a base. */
export interface OidcEndpoints {
  issuer: string | string[];
  authorization: string;
  token: string;
  jwksUri: string;
  userinfo?: string;
}

export interface OidcDefinition {
  name: OAuthProviderName;
  defaultScopes: readonly string[];
  /** The endpoints for this configuration (discovery or fixed). */
  endpoints(rt: ProviderRuntime): Promise<OidcEndpoints>;
  authorizationParams?: OAuth2Provider['authorizationParams'];
  scopesFor?: OAuth2Provider['scopesFor'];
  forwardsQuery?: OAuth2Provider['forwardsQuery'];
  /** Extra profile fields from the callback's own parameters (apple's `user`). */
  fromForm?(form: URLSearchParams): Record<string, unknown>;
  /**
   * The issuers a given id_token may name and the keys to check it with, where they depend on the token
   * and on where it came from (azure's tenants, B2C and custom domains).
   */
  trustOf?(rt: ProviderRuntime, idToken: string, source: 'callback' | 'grant'): Promise<{ issuer: string[]; jwksUri: string }>;
  /**
   * The provider's own reading of its claims, in place of profileFromClaims, where its tokens carry the
   * person under other names or only some claims belong in identity_data (apple, azure, keycloak, vercel_marketplace).
   */
  profile?: (claims: Record<string, unknown>) => ExternalProfile;
}

/** What a caller may add to an id_token check. */
export interface VerifyOptions {
  /** SHA-256 (hex) of the raw nonce the client holds. */
  nonceHash?: string;
  /** `aud` values accepted besides the client ids (apple: EXTERNAL_IOS_BUNDLE_ID at the id_token grant). */
  extraAudiences?: readonly string[];
  /** Set by the id_token grant: a token the app handed in, not one from the provider's token endpoint. */
  atGrant?: boolean;
}

/** An OIDC module: an OAuth2Provider that can also check an id_token handed to the id_token grant. */
export interface OidcProvider extends OAuth2Provider {
  endpoints(rt: ProviderRuntime): Promise<OidcEndpoints>;
  /** Verifies an id_token of this provider (signature by the issuer's keys, iss, aud = a client id, exp, nonce). */
  verify(rt: ProviderRuntime, idToken: string, options?: VerifyOptions): Promise<Record<string, unknown>>;
  /** The profile of verified claims (plus the callback's form fields). */
  profile(claims: Record<string, unknown>, form?: URLSearchParams): ExternalProfile;
}

/** Endpoints of an issuer that publishes a discovery document. */
export async function discoveredEndpoints(rt: ProviderRuntime, issuer: string): Promise<OidcEndpoints> {
  const doc = await rt.discover(issuer);
  return {
    issuer: doc.issuer,
    authorization: doc.authorization_endpoint,
    token: doc.token_endpoint,
    jwksUri: doc.jwks_uri,
    userinfo: doc.userinfo_endpoint,
  };
}

/** Endpoints by discovery from a document that must name `issuer` itself (as go-oidc insists), else refused. */
export async function issuerEndpoints(rt: ProviderRuntime, issuer: string): Promise<OidcEndpoints> {
  const found = await discoveredEndpoints(rt, issuer);
  if (found.issuer !== issuer) throw new ProviderError(`${issuer}: discovery document names issuer ${String(found.issuer)}`);
  return found;
}

/** The `aud` values a provider's id_token may name: its client ids, then what the caller adds. */
export function acceptedAudiences(rt: ProviderRuntime, options: VerifyOptions): string[] {
  return [...clientIds(rt.config), ...(options.extraAudiences ?? [])];
}

export function oidcProvider(def: OidcDefinition): OidcProvider {
  const verify = async (rt: ProviderRuntime, idToken: string, options: VerifyOptions = {}) => {
    const endpoints = await def.endpoints(rt);
    const { issuer, jwksUri } = def.trustOf ? await def.trustOf(rt, idToken, options.atGrant ? 'grant' : 'callback') : endpoints;
    const audience = acceptedAudiences(rt, options);
    return rt.verifyIdToken(idToken, { issuer, audience, jwksUri, nonceHash: options.nonceHash });
  };
  const read = def.profile ?? profileFromClaims;
  const profile = (claims: Record<string, unknown>, form?: URLSearchParams) => {
    return read({ ...claims, ...(form && def.fromForm?.(form)) });
  };
  return {
    protocol: 'oauth2',
    name: def.name,
    defaultScopes: def.defaultScopes,
    scopeSeparator: ' ',
    pkceToProvider: false,
    endpoints: (rt) => def.endpoints(rt),
    verify,
    profile,
    async authorizationEndpoint(rt) {
      return (await def.endpoints(rt)).authorization;
    },
    authorizationParams: def.authorizationParams,
    scopesFor: def.scopesFor,
    forwardsQuery: def.forwardsQuery,
    async exchangeCode(rt, code, codeVerifier) {
      return exchangeAuthorizationCode(rt, (await def.endpoints(rt)).token, code, codeVerifier);
    },
    async fetchProfile(rt, tokens, form) {
      const endpoints = await def.endpoints(rt);
      let claims: Record<string, unknown> = {};
      if (tokens.idToken) {
        claims = await verify(rt, tokens.idToken);
        // The token answer's id_token must belong to its access token, as the original's parser checks.
        if (typeof claims.at_hash === 'string' && !accessTokenHashMatches(tokens.idToken, tokens.accessToken, claims.at_hash)) {
          throw new IdTokenError(`${def.name}: the id_token's at_hash does not match the access token`);
        }
      } else if (!endpoints.userinfo) throw new ProviderError(`${def.name} answered without an id_token`);
      // The token's email under any case of its name is its email (go-json-fields.ts).
      if (endpoints.userinfo && (!tokens.idToken || typeof scalarField(claims, 'email') !== 'string')) {
        const info = await fetchJson(rt, endpoints.userinfo, tokens.accessToken);
        if (claims.sub !== undefined && info.sub !== claims.sub) throw new ProviderError(`${def.name}: userinfo is about another subject`);
        claims = { ...claims, ...withoutUndefined(info) };
      }
      return profile(claims, form);
    },
  };
}

const withoutUndefined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const STANDARD = [
  'iss',
  'sub',
  'aud',
  'iat',
  'exp',
  'nbf',
  'auth_time',
  'nonce',
  'at_hash',
  'c_hash',
  'azp',
  'sid',
  'jti',
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'profile',
  'picture',
  'website',
  'email',
  'email_verified',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'phone_number',
  'phone_number_verified',
  'address',
  'updated_at',
];

/** Truthy for true and "true" (Apple and some others send the string). */
export const truthy = (v: unknown) => v === true || v === 'true';

/** identity_data from OIDC claims, with the original's key names; the rest under custom_claims. */
export function profileFromClaims(claims: Record<string, unknown>): ExternalProfile {
  const sub = typeof claims.sub === 'string' || typeof claims.sub === 'number' ? String(claims.sub) : '';
  if (!sub) throw new ProviderError('the provider named no subject');
  const str = (k: string) => {
    const v = claims[k];
    return typeof v === 'string' && v ? v : undefined;
  };
  const name = str('name') ?? ([str('given_name'), str('family_name')].filter(Boolean).join(' ') || undefined);
  const email = str('email');
  const emailVerified = truthy(claims.email_verified);
  const custom = Object.fromEntries(Object.entries(claims).filter(([k]) => !STANDARD.includes(k)));
  const data: Record<string, unknown> = {
    iss: str('iss'),
    sub,
    provider_id: sub,
    name,
    full_name: name,
    given_name: str('given_name'),
    family_name: str('family_name'),
    nickname: str('nickname'),
    preferred_username: str('preferred_username'),
    user_name: str('preferred_username'),
    picture: str('picture'),
    avatar_url: str('picture'),
    email,
    email_verified: email ? emailVerified : undefined,
    phone: str('phone_number'),
    phone_verified: str('phone_number') ? truthy(claims.phone_number_verified) : undefined,
    custom_claims: Object.keys(custom).length ? custom : undefined,
  };
  const emails: ExternalEmail[] = email ? [{ email, verified: emailVerified, primary: true }] : [];
  return { subject: sub, emails, claims: withoutUndefined(data) };
}

/**
 * The standard claims alone, without custom_claims: how the original reads an id_token of an issuer it has
 * no parser of its own for (a custom provider's or an EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS one at the id_token
 * grant), so an arbitrary issuer's other claims never reach user_metadata.
 */
export function standardProfile(claims: Record<string, unknown>): ExternalProfile {
  const profile = profileFromClaims(claims);
  const standard = { ...profile.claims };
  delete standard.custom_claims;
  return { ...profile, claims: standard };
}
