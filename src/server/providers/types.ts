// The contract every external identity provider module under src/server/providers/ keeps (docs/oauth.md).
// A module only knows its provider's wire format: endpoints, default scopes, how to trade a code for tokens
// and how its profile maps to identity data. State, PKCE towards the client, linking and sessions belong
// to the flow that calls it, so a provider module never touches the database or the request.
import type { OAuthProviderConfig, OAuthProviderName } from '../config/types.js';

/** One address the provider reported, and whether the provider itself verified it. */
export interface ExternalEmail {
  email: string;
  verified: boolean;
  primary: boolean;
}

/** What the service learns about a person from a provider, normalised. */
export interface ExternalProfile {
  /** The provider's stable user id: becomes identities.provider_id and the `sub` of identity_data. */
  subject: string;
  /** Every address reported, primary first; may be empty (then EMAIL_OPTIONAL decides). */
  emails: ExternalEmail[];
  /**
   * identity_data as stored and merged into user_metadata: `iss, sub, name, full_name, avatar_url, picture,
   * user_name, preferred_username, nickname, email, email_verified, phone, phone_verified, custom_claims`
   * — only the keys the provider supplied, never tokens.
   */
  claims: Record<string, unknown>;
  /**
   * The provider vouches for a person without an address (Apple and Vercel Marketplace, whose tokens may
   * carry none): as in the original, such a person signs in without EMAIL_OPTIONAL, to a confirmed account
   * with no email.
   */
  addressless?: true;
}

/** The token endpoint's answer. Empty strings where the provider gave nothing. */
export interface ProviderTokens {
  accessToken: string;
  refreshToken: string;
  idToken: string;
  /** The whole JSON answer: some providers carry the profile in it (workos) or need a field of it. */
  response: Record<string, unknown>;
}

/** Outbound HTTP bounded by INTERNAL_HTTP_TIMEOUT; throws ProviderError on failure, timeout or a non-2xx answer. */
export type ProviderFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * How a runtime's connections are made when they must reach public addresses only (custom providers,
 * custom-providers/public-connections.ts): fetch's dispatcher (every call, key sets too) and the
 * check made before a call whose address no resolver of ours sees (an IP literal, a call through the proxy).
 */
export interface RestrictedConnections {
  readonly dispatcher: unknown;
  /** why `url` may not be called, found before the call (an IP literal, or a proxied call's name); null when it may */
  refused(url: string | URL): Promise<string | null>;
}

/** What the expected id_token must satisfy; the verifier pins the algorithm to the issuer's published key. */
export interface IdTokenExpectation {
  issuer: string | string[];
  /** Accepted `aud` values: every id of EXTERNAL_X_CLIENT_ID. */
  audience: string[];
  /** Where the keys are; when absent the issuer's OIDC discovery document names it. */
  jwksUri?: string;
  /** SHA-256 (hex) of the raw nonce the client holds; absent: no nonce check. */
  nonceHash?: string;
  /** The only signature algorithms accepted (a custom provider's discovery document names them); absent: the key's own. */
  algorithms?: string[];
}

/** Everything a provider module may use: its settings and the service's bounded outbound calls. */
/** An issuer's OIDC discovery document: the members a sign-in uses are checked to be there. */
export interface DiscoveryDocument {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  [key: string]: unknown;
}

export interface ProviderRuntime {
  readonly config: OAuthProviderConfig;
  readonly fetch: ProviderFetch;
  /** The issuer's discovery document, cached (runtime.ts); from `discoveryUrl` when it is not at the issuer's well-known path. */
  discover(issuer: string, discoveryUrl?: string): Promise<DiscoveryDocument>;
  /** Verifies signature (issuer JWKS, cached), iss, aud, exp and the nonce; returns the claims. */
  verifyIdToken(token: string, expect: IdTokenExpectation): Promise<Record<string, unknown>>;
}

/** A provider added at run time through /admin/custom-providers (docs/custom-providers.md). */
export type CustomProviderName = `custom:${string}`;

/** An OAuth 2.0 / OIDC authorization-code provider. */
export interface OAuth2Provider {
  readonly protocol: 'oauth2';
  readonly name: OAuthProviderName | CustomProviderName;
  readonly defaultScopes: readonly string[];
  /** How the provider wants `scope` joined. */
  readonly scopeSeparator: ' ' | ',';
  /** The flow sends a PKCE challenge to the provider (X requires it); its verifier is kept in flow state. */
  readonly pkceToProvider: boolean;
  /** The scopes to ask for given /authorize's `scopes`; without it, the default scopes plus the requested ones. */
  scopesFor?(requested: string): string[];
  /**
   * false: /authorize's other query parameters are not passed on to the provider (apple, as the original,
   * whose Apple authorization URL takes nothing but its own). Passed on when left out.
   */
  readonly forwardsQuery?: boolean;
  /** The authorization endpoint, honouring config.url (OIDC providers may look it up by discovery). */
  authorizationEndpoint(rt: ProviderRuntime): Promise<string>;
  /**
   * Extra query parameters for the authorization URL, besides client_id, redirect_uri, response_type=code,
   * scope, state and the PKCE pair that the flow adds (apple: response_mode=form_post; workos: the
   * forwarded `provider`). `query` is the incoming /authorize query.
   */
  authorizationParams?(rt: ProviderRuntime, query: URLSearchParams): Record<string, string>;
  /** Trades the callback's code for tokens at the provider's token endpoint. */
  exchangeCode(rt: ProviderRuntime, code: string, codeVerifier: string | undefined): Promise<ProviderTokens>;
  /** Reads the person: id_token claims or the provider's user API. `form` is the callback's own parameters (apple's `user`). */
  fetchProfile(rt: ProviderRuntime, tokens: ProviderTokens, form: URLSearchParams): Promise<ExternalProfile>;
}

/** Twitter's OAuth 1.0a: a request token first, then the user's consent, then an access token. */
export interface OAuth1Provider {
  readonly protocol: 'oauth1';
  readonly name: OAuthProviderName;
  /** Step 1: a request token bound to `callbackUrl`; the user is sent to `authorizeUrl`. */
  requestToken(rt: ProviderRuntime, callbackUrl: string): Promise<{ token: string; secret: string; authorizeUrl: string }>;
  /** Step 3: the callback's oauth_token + oauth_verifier, with the secret kept from step 1. */
  accessToken(rt: ProviderRuntime, token: string, secret: string, verifier: string): Promise<ProviderTokens & { tokenSecret: string }>;
  fetchProfile(rt: ProviderRuntime, tokens: ProviderTokens & { tokenSecret: string }): Promise<ExternalProfile>;
}

export type ExternalProvider = OAuth2Provider | OAuth1Provider;

/** A provider named in a request, ready for the flow: built in, or custom (oauth/provider-lookup.ts). */
export interface UsableProvider {
  name: OAuthProviderName | CustomProviderName;
  module: ExternalProvider;
  rt: ProviderRuntime;
}
