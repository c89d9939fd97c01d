// The ids the original's handlers add to a request's log line (docs/observability.md#logs), taken here from
// the route's path parameters under the original's field names, and only when the original would have
// read them: an id that is no UUID (or an identifier without its `custom:` prefix) is refused before it
// names anything.
import { canonicalUuid } from '../uuid-text.js';

type Reading = [field: string, read: (value: string) => string | null];

const LOGGED: Record<string, Reading> = {
  user_id: ['user_id', canonicalUuid],
  factor_id: ['factor_id', canonicalUuid],
  idp_id: ['sso_provider_id', canonicalUuid],
  identifier: ['identifier', (value) => (value.startsWith('custom:') ? value : null)],
  // As given, as the original logs the client id it parsed.
  client_id: ['oauth_client_id', (value) => (canonicalUuid(value) ? value : null)],
  authorization_id: ['authorization_id', (value) => value],
};

/** The log line's fields for these path parameters; undefined for a route without any (most requests). */
export function loggedParams(params: Record<string, string>): Record<string, string> | undefined {
  let fields: Record<string, string> | undefined;
  for (const name in params) {
    const reading = LOGGED[name];
    const value = reading?.[1](params[name]);
    if (value) (fields ??= {})[reading[0]] = value;
  }
  return fields;
}
