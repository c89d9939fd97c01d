// POST /oauth/token's parameters, from a JSON body or else a form (RFC 6749) merged with the query string
// (form-values.ts), as the original reads them. A JSON body that does not parse, or a member that is not a
// string, or a malformed form, is the OAuth error invalid_request, after the client's authentication.
import { OAuthRefusal } from '../grants/oauth-refusal.js';
import type { ApiRequest } from '../http/types.js';
import { formValues } from './form-values.js';
import { fieldNames, underFieldNames } from '../http/field-names.js';

export const TOKEN_PARAMS = [
  'grant_type',
  'code',
  'refresh_token',
  'redirect_uri',
  'client_id',
  'client_secret',
  'code_verifier',
  'resource',
] as const;
export type TokenParams = Record<(typeof TOKEN_PARAMS)[number], string>;
/** A JSON body's members match them as the original's decoder matches them (http/field-names.ts). */
const TOKEN_FIELDS = fieldNames(TOKEN_PARAMS);

/**
 * Parameters that could not be read. The original's client authentication reads the same body first, for
 * the credentials alone: when it could read them they are kept (`credentials`) and the client authenticates
 * before this refusal is answered; when it could not, it fails with its own words (authReason), unless the
 * credentials came in the Authorization header.
 */
export class UnreadableParams extends OAuthRefusal {
  constructor(
    readonly authReason: string,
    description: string,
    readonly credentials: TokenParams | null = null,
  ) {
    super('invalid_request', description);
  }
}

const CREDENTIALS: ReadonlySet<string> = new Set(['client_id', 'client_secret']);

/**
 * The JSON body's members named as the parameters, or null when the original's decoder reads no JSON: no
 * bytes (an empty body is {} on the service's other routes) or text that does not parse.
 */
function jsonMembers(req: ApiRequest<unknown>): Record<string, unknown> | null {
  if (req.rawBody.length === 0) return null;
  try {
    return underFieldNames(req.json(), TOKEN_FIELDS);
  } catch {
    return null;
  }
}

export function readTokenParams(req: ApiRequest<unknown>): TokenParams {
  const params = Object.fromEntries(TOKEN_PARAMS.map((n) => [n, ''])) as TokenParams;
  if ((req.headers['content-type'] ?? '').includes('application/json')) {
    const body = jsonMembers(req);
    if (!body) throw new UnreadableParams('failed to parse JSON body', 'Invalid JSON body');
    let unreadable: 'credentials' | 'grant' | null = null;
    for (const name of TOKEN_PARAMS) {
      const v = body[name];
      if (v === undefined || v === null) continue;
      if (typeof v === 'string') params[name] = v;
      else if (CREDENTIALS.has(name)) unreadable = 'credentials';
      else unreadable ??= 'grant';
    }
    if (unreadable) {
      throw new UnreadableParams('failed to parse JSON body', 'Invalid JSON body', unreadable === 'grant' ? params : null);
    }
    return params;
  }
  const form = formValues(req);
  if (!form) throw new UnreadableParams('failed to parse form', 'Failed to parse form data');
  // the original reads the form only; a resource is honoured from a JSON body
  for (const name of TOKEN_PARAMS) if (name !== 'resource') params[name] = form.get(name) ?? '';
  return params;
}
