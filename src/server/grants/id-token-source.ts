// Which provider an id_token handed to grant_type=id_token is for (docs/oauth.md#the-id_token-grant), in the
// original's order: a built-in provider named, or owning the `issuer` sent; then a custom provider
// (`custom:<id>`); then an issuer of EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS with the `client_id` sent; else
// refused. Each answer says how to check the token, how to read its claims and what identities.provider is.
import { apiError } from '../errors.js';
import { idTokenProvider, runtimeFor } from '../providers/index.js';
import { detectedIssuer } from './id-token-issuer.js';
import { acceptsIdTokens } from '../providers/configured.js';
import { createProviderRuntime } from '../providers/runtime.js';
import { discoveredEndpoints, standardProfile } from '../providers/oidc.js';
import { ProviderError } from '../providers/outbound.js';
import { issuerReader, readerOfIssuer, WELL_KNOWN_ISSUER } from '../providers/issuer-readers.js';
import { customIdTokenProvider } from '../custom-providers/lookup.js';
import { verifyCustomIdToken } from '../custom-providers/module.js';
import type { OAuthProviderConfig, OAuthProviderName } from '../config/types.js';
import type { ExternalProfile } from '../providers/types.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { beforeDeadline } from '../http/request-budget.js';

export interface IdTokenSource {
  /** identities.provider: the built-in name, `custom:<id>`, or the allowed issuer's URL */
  name: string;
  /** Whose reader decodes the claims (id-token-claims.ts): the built-in provider's, or by the issuer's (providers/issuer-readers.ts). */
  reader: string;
  /** Signature by the issuer's keys, iss, aud, exp; the claims. Throws IdTokenError or ProviderError. */
  verify(idToken: string): Promise<Record<string, unknown>>;
  profile(claims: Record<string, unknown>): ExternalProfile;
  skipNonceCheck: boolean;
  emailOptional: boolean;
}

export interface IdTokenRequest {
  provider: string;
  clientId: string;
  issuer: string;
  idToken: string;
}

/** `req`: the outbound calls made here give up before its deadline (http/request-budget.ts). */
export async function idTokenSource(ctx: AppContext, req: Pick<ApiRequest, 'msLeft'>, r: IdTokenRequest): Promise<IdTokenSource> {
  const builtIn = builtInByName(r) ?? (r.issuer ? await builtInByIssuer(ctx, req, r.issuer) : null);
  if (builtIn) {
    // Apple's and Azure's token issuer is checked first, then whether the provider is switched on (as the original orders them).
    const detected = detectedIssuer(builtIn, runtimeFor(ctx.config, builtIn), r.idToken, r.issuer);
    if (!acceptsIdTokens(ctx.config, builtIn)) {
      // Named by the issuer the original names it by: the token's (apple, azure), keycloak's realm URL, or the fixed one.
      const issuer = detected ?? (builtIn === 'keycloak' ? ctx.config.external.providers.keycloak.url : WELL_KNOWN_ISSUER[builtIn]);
      throw apiError('provider_disabled', `Provider (issuer "${issuer ?? ''}") is not enabled`);
    }
    return builtInSource(ctx, builtIn);
  }
  if (r.provider.startsWith('custom:')) return customSource(ctx, req, r.provider);
  if (ctx.config.external.allowedIdTokenIssuers.includes(r.issuer)) return allowedIssuerSource(ctx, r.issuer, r.clientId);
  // The original names the provider sent (usually empty), not the issuer.
  throw apiError('custom_oidc_not_allowed', `Custom OIDC provider "${r.provider}" not allowed`);
}

/**
 * The built-in providers whose tokens the grant takes, the original's list. Other modules can verify an
 * id_token (linkedin_oidc, at its /callback), but the original's grant does not take theirs: such a name
 * falls through to the allowed issuers, and is refused there as an unknown one.
 */
const GRANT_PROVIDERS: readonly OAuthProviderName[] = [
  'apple',
  'google',
  'azure',
  'facebook',
  'keycloak',
  'kakao',
  'vercel_marketplace',
  'snapchat',
];

/** A built-in provider whose tokens the grant takes, by name, switched on or not. */
function builtInByName(r: IdTokenRequest): OAuthProviderName | null {
  const name = r.provider as OAuthProviderName;
  return GRANT_PROVIDERS.includes(name) && idTokenProvider(name) ? name : null;
}

/**
 * A built-in provider that owns `issuer`: one of the well-known issuers (switched on or not), or an enabled
 * provider's configured one. A provider whose discovery document cannot be had owns none, and so does one
 * that has not answered within half the request's time left (http/request-budget.ts): the token is still to
 * be checked after it.
 */
async function builtInByIssuer(ctx: AppContext, req: Pick<ApiRequest, 'msLeft'>, issuer: string): Promise<OAuthProviderName | null> {
  // The issuers the original knows its built-in providers by, whether or not they are switched on: a token
  // of a disabled one is refused as that provider's, never taken as an allowed issuer's (the setting's
  // default lists apple's and google's, which the original's switch reaches first). LinkedIn's is not one.
  const known = readerOfIssuer(issuer);
  if (known && GRANT_PROVIDERS.includes(known)) return known;
  for (const name of GRANT_PROVIDERS) {
    const module = idTokenProvider(name);
    if (!module || !acceptsIdTokens(ctx.config, name)) continue;
    const lookup = () => module.endpoints(runtimeFor(ctx.config, name));
    const late = () => new ProviderError(`${name} did not answer before the request deadline`);
    const configured = (await beforeDeadline(req, lookup, late, 0.5).catch(() => null))?.issuer;
    if (configured && (Array.isArray(configured) ? configured : [configured]).includes(issuer)) return name;
  }
  return null;
}

function builtInSource(ctx: AppContext, name: OAuthProviderName): IdTokenSource {
  const module = idTokenProvider(name)!;
  const rt = runtimeFor(ctx.config, name);
  // A native iOS app's Sign in with Apple token names the app's bundle id as its audience, not the
  // Services ID the web flow uses: EXTERNAL_IOS_BUNDLE_ID admits it here, and only here.
  const extraAudiences = name === 'apple' && ctx.config.external.iosBundleId ? [ctx.config.external.iosBundleId] : [];
  return {
    name,
    reader: name,
    verify: (idToken) => module.verify(rt, idToken, { extraAudiences, atGrant: true }),
    profile: (claims) => module.profile(claims),
    // Facebook's Limited Login SDK puts the nonce in the token its own way: the original never checks it.
    skipNonceCheck: rt.config.skipNonceCheck || name === 'facebook',
    emailOptional: rt.config.emailOptional,
  };
}

/**
 * How a token of `issuer` that came through no built-in provider is read: by the reader of the built-in
 * provider owning that issuer, as the original picks its reader by the token's issuer; else as the
 * standard claims (the issuer is checked against the token's by verify).
 */
function readingOf(issuer: string): Pick<IdTokenSource, 'reader' | 'profile'> {
  const reader = issuerReader(issuer);
  return reader ? { reader: reader.name, profile: reader.profile } : { reader: '', profile: standardProfile };
}

/** `custom:<id>`: checked as its /callback checks it, but read as the original's grant reads it (no attribute_mapping, no allowlist). */
async function customSource(ctx: AppContext, req: Pick<ApiRequest, 'msLeft'>, identifier: string): Promise<IdTokenSource> {
  const { row, rt } = await customIdTokenProvider(ctx, req, identifier);
  return {
    name: identifier,
    ...readingOf(row.issuer ?? ''),
    verify: (idToken) => verifyCustomIdToken(rt, row, idToken),
    skipNonceCheck: row.skip_nonce_check,
    emailOptional: row.email_optional,
  };
}

/**
 * An issuer of EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS (the original's deprecated form): the audience is the
 * `client_id` the caller sent, the keys those of the issuer's own discovery document. Both are fetched as
 * the built-in providers' are (providers/runtime.ts: INTERNAL_HTTP_TIMEOUT, no redirect, the document read
 * up to 1 MiB and kept an hour, the key set cached). The operator chose the issuers, so, like a keycloak
 * realm, they may be on private addresses; a caller can only pick among them.
 */
function allowedIssuerSource(ctx: AppContext, issuer: string, clientId: string): IdTokenSource {
  // Nonce checked, an email required: the original's settings for these issuers.
  const settings: OAuthProviderConfig = {
    enabled: true,
    clientId,
    secret: '',
    redirectUri: '',
    url: issuer,
    apiUrl: '',
    emailOptional: false,
    skipNonceCheck: false,
  };
  const rt = createProviderRuntime(settings, ctx.config.external);
  return {
    name: issuer,
    ...readingOf(issuer),
    async verify(idToken) {
      const endpoints = await discoveredEndpoints(rt, issuer);
      // As go-oidc's discovery: a document naming another issuer is not this issuer's.
      if (endpoints.issuer !== issuer) throw new ProviderError(`${issuer}: discovery document names issuer ${String(endpoints.issuer)}`);
      return rt.verifyIdToken(idToken, { issuer, audience: [clientId], jwksUri: endpoints.jwksUri });
    },
    skipNonceCheck: settings.skipNonceCheck,
    emailOptional: settings.emailOptional,
  };
}
