// The claims a custom access token hook returns must still fit the original's minimum schema
// (MinimumViableTokenSchema, docs/hooks.md#custom-access-token), checked by Ajv. Hook authors read the
// problems in the 500's message, so Ajv's errors are worded here as the original's library (gojsonschema)
// words them: "<field>: <description>", the missing claims first (in the required list's order), then wrong
// types (in the schema's order; the original's order among several is random).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

const MINIMUM_CLAIMS_SCHEMA = {
  type: 'object',
  properties: {
    aud: { type: ['string', 'array'] },
    exp: { type: 'integer' },
    jti: { type: 'string' },
    iat: { type: 'integer' },
    iss: { type: 'string' },
    nbf: { type: 'integer' },
    sub: { type: 'string' },
    email: { type: 'string' },
    phone: { type: 'string' },
    app_metadata: { type: 'object', additionalProperties: true },
    user_metadata: { type: 'object', additionalProperties: true },
    role: { type: 'string' },
    aal: { type: 'string' },
    amr: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'object' }] } },
    session_id: { type: 'string' },
    client_id: { type: 'string' },
  },
  required: ['aud', 'exp', 'iat', 'sub', 'email', 'phone', 'role', 'aal', 'session_id', 'is_anonymous'],
};

// Compiled when the hook first answers, not when an HTTP thread starts: most deployments have no such hook.
let validator: ValidateFunction | undefined;

/** The problems with `claims`, one line each in the original's words; [] when they fit. */
export function claimsSchemaProblems(claims: unknown): string[] {
  const check = (validator ??= new Ajv({ allErrors: true, strict: false, verbose: true }).compile(MINIMUM_CLAIMS_SCHEMA));
  if (check(claims)) return [];
  const errors = check.errors ?? [];
  const missing = errors.filter((e) => e.keyword === 'required').map((e) => `(root): ${String(e.params.missingProperty)} is required`);
  const wrong: string[] = [];
  for (const e of errors) {
    if (e.keyword === 'anyOf') {
      // gojsonschema names the failed anyOf, then the first alternative's mismatch; Ajv lists every
      // alternative's mismatch before the anyOf itself.
      const first = errors.find((b) => b.keyword === 'type' && b.instancePath === e.instancePath && b.schemaPath.endsWith('/anyOf/0/type'));
      wrong.push(`${fieldOf(e)}: Must validate at least one schema (anyOf)`);
      if (first) wrong.push(typeProblem(first));
    } else if (e.keyword === 'type' && !e.schemaPath.includes('/anyOf/')) {
      wrong.push(typeProblem(e));
    }
  }
  return [...missing, ...wrong];
}

function typeProblem(e: ErrorObject): string {
  const allowed = e.params.type as string | string[];
  const expected = Array.isArray(allowed) ? `[${allowed.join(',')}]` : allowed;
  return `${fieldOf(e)}: Invalid type. Expected: ${expected}, given: ${jsonType(e.data)}`;
}

/** Ajv's `/amr/0` as gojsonschema's `amr.0`; the whole document is `(root)`. */
function fieldOf(e: ErrorObject): string {
  return e.instancePath === '' ? '(root)' : e.instancePath.slice(1).replaceAll('/', '.');
}

function jsonType(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  // A whole number is an integer (1.0 included), as the original's library counts them.
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
