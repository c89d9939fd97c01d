// The issuer the OAuth 2.1 server names in its metadata and its ID tokens: JWT_ISSUER, or, when that is
// empty, API_EXTERNAL_URL (ours: the original would publish relative endpoints; docs/oauth-server.md#departures).
import type { Config } from '../config/types.js';

export const issuerOf = (config: Pick<Config, 'jwt' | 'api'>): string => config.jwt.issuer || config.api.externalUrl;

/** The issuer without trailing slashes, the base of every endpoint URL. */
export const endpointBase = (config: Pick<Config, 'jwt' | 'api'>): string => issuerOf(config).replace(/\/+$/, '');
