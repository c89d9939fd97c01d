// A custom provider's row made into the module and runtime the OAuth flow runs every provider with
// (providers/types.ts), built per request from the row just read, so a change to the row holds at once
// (docs/custom-providers.md#signing-in). OIDC endpoints come from the discovery document stored with the
// row (its signing algorithms from the issuer's live document when the stored copy lists none); OAuth2
// endpoints are the row's own. Outbound calls use the runtime's bounded fetch, and id_tokens
// are verified against the issuer's JWKS with the runtime's pinned checks.
import type { CustomProviderRow } from '../../db/custom-oauth-providers.js';
import type { Config, OAuthProviderConfig } from '../config/types.js';
import { createProviderRuntime } from '../providers/runtime.js';
import { exchangeAuthorizationCode, fetchJson } from '../providers/code-exchange.js';
import { ProviderError } from '../providers/outbound.js';
import type { CustomProviderName, OAuth2Provider, ProviderRuntime } from '../providers/types.js';
import { customProfile } from './profile.js';
import { customProviderConnections } from './public-connections.js';
import { withOpenid } from './params.js';
import { discoveryUrlOf } from './discovery.js';

interface Endpoints {
  authorization: string;
  token: string;
  userinfo: string;
  jwksUri: string;
}

/** The runtime: the row's credentials in the shape of a configured provider. `clientSecret` is opened already. */
export function customRuntime(config: Config, row: CustomProviderRow, clientSecret: string): ProviderRuntime {
  const base = config.customOAuth.externalUrl || config.api.externalUrl;
  const settings: OAuthProviderConfig = {
    enabled: true,
    clientId: [row.client_id, ...row.acceptable_client_ids].join(','),
    secret: clientSecret,
    redirectUri: `${base.replace(/\/+$/, '')}/callback`,
    url: '',
    apiUrl: '',
    emailOptional: row.email_optional,
    skipNonceCheck: row.skip_nonce_check,
  };
  // Its answers are capped like every provider's (providers/outbound.ts), and it reaches public addresses only.
  return createProviderRuntime(settings, config.external, customProviderConnections(config));
}

function endpointsOf(row: CustomProviderRow): Endpoints {
  if (row.provider_type === 'oauth2') {
    return {
      authorization: row.authorization_url ?? '',
      token: row.token_url ?? '',
      userinfo: row.userinfo_url ?? '',
      jwksUri: row.jwks_uri ?? '',
    };
  }
  const doc = row.cached_discovery ?? {};
  const text = (key: string) => (typeof doc[key] === 'string' ? doc[key] : '');
  return {
    authorization: text('authorization_endpoint'),
    token: text('token_endpoint'),
    userinfo: text('userinfo_endpoint'),
    jwksUri: text('jwks_uri'),
  };
}

// Public-key signatures only, the set go-oidc verifies: a token signed with `none` or an HMAC of the
// client secret never passes.
const ASYMMETRIC = /^(RS|PS|ES)(256|384|512)$|^EdDSA$/;

/**
 * The algorithms the issuer signs id_tokens with, from the discovery document stored with the row, or,
 * when that copy has no list (the original stores none), from the issuer's live document (cached per
 * thread, runtime.ts), as the original's verifier learns them. RS256 when the issuer names none usable.
 */
async function signingAlgorithms(rt: ProviderRuntime, row: CustomProviderRow): Promise<string[]> {
  const key = 'id_token_signing_alg_values_supported';
  let listed = row.cached_discovery?.[key];
  if (listed === undefined && row.issuer) {
    const live = await rt.discover(row.issuer, discoveryUrlOf(row.issuer, row.discovery_url));
    // As at saving: a document naming another issuer is not this issuer's.
    if (live.issuer !== row.issuer) throw new ProviderError(`${row.identifier}: discovery document names issuer ${String(live.issuer)}`);
    listed = live[key];
  }
  const usable = Array.isArray(listed) ? listed.filter((a): a is string => typeof a === 'string' && ASYMMETRIC.test(a)) : [];
  return usable.length > 0 ? usable : ['RS256'];
}

const need = (row: CustomProviderRow, url: string, what: string) => {
  if (!url) throw new ProviderError(`${row.identifier} has no ${what}`);
  return url;
};

/**
 * An OIDC row's id_token checked as /callback and the id_token grant both check it: signed by a key of the
 * discovery document's jwks_uri with an algorithm the document names, `iss` the row's issuer, `aud` its
 * client_id or one of acceptable_client_ids, not expired. Returns the claims.
 */
export async function verifyCustomIdToken(rt: ProviderRuntime, row: CustomProviderRow, idToken: string): Promise<Record<string, unknown>> {
  return rt.verifyIdToken(idToken, {
    issuer: row.issuer ?? '',
    audience: [row.client_id, ...row.acceptable_client_ids],
    jwksUri: need(row, endpointsOf(row).jwksUri, 'jwks_uri'),
    algorithms: await signingAlgorithms(rt, row),
  });
}

export function customModule(row: CustomProviderRow): OAuth2Provider {
  const endpoints = endpointsOf(row);
  const oidc = row.provider_type === 'oidc';
  return {
    protocol: 'oauth2',
    name: row.identifier as CustomProviderName,
    defaultScopes: row.scopes,
    scopeSeparator: ' ',
    pkceToProvider: row.pkce_enabled,
    scopesFor(requested) {
      // Space-separated (RFC 6749), as the original reads a custom provider's `scopes`: a comma is part of a scope.
      const asked = requested.split(/\s+/).filter(Boolean);
      const scopes = asked.length > 0 ? asked : row.scopes;
      return oidc ? withOpenid(scopes) : scopes;
    },
    authorizationEndpoint: () => Promise.resolve(need(row, endpoints.authorization, 'authorization endpoint')),
    authorizationParams: () =>
      Object.fromEntries(Object.entries(row.authorization_params).filter((e): e is [string, string] => typeof e[1] === 'string')),
    exchangeCode: (rt, code, verifier) => exchangeAuthorizationCode(rt, need(row, endpoints.token, 'token endpoint'), code, verifier),
    async fetchProfile(rt, tokens) {
      if (oidc && tokens.idToken) return customProfile(row, await verifyCustomIdToken(rt, row, tokens.idToken), 'id_token');
      const info = await fetchJson(
        rt,
        need(row, endpoints.userinfo, oidc ? 'id_token or userinfo endpoint' : 'userinfo endpoint'),
        tokens.accessToken,
      );
      return customProfile(row, info, 'userinfo');
    },
  };
}
