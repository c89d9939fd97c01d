// Body schemas, one per route, declared in the route's module and compiled by ajv the first time a body
// is checked against them (compiling them all took a tenth of an HTTP thread's start-up); the
// dispatcher checks a route's schema where the handler first reads req.body() (http/server.ts). A field
// is declared with its JSON type, and the handler receives the body typed from that declaration.
// Fields are optional and null counts as absent. A field the original's request type declares is first
// checked as its decoder checks it, refused 400 bad_json in Go's words (go-field-types.ts); the schema's
// own refusal, 400 validation_failed naming the field ("email must be a string"), is left for fields of
// ours and routes the original has not. Checks beyond the type (missing email before weak password...)
// live next to the schema, in the route's module, in the original's order.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { apiError } from '../errors.js';
import type { BodyCheck, JsonObject } from './types.js';
import { fieldNames, underFieldNames, type FieldNames } from './field-names.js';

const ajv = new Ajv({ allErrors: false, strict: true, coerceTypes: false });

/** ajv's validator for `schema`, compiled on its first call. */
function compiledOnFirstUse<T>(schema: object): () => ValidateFunction<T> {
  let validate: ValidateFunction<T> | undefined;
  return () => (validate ??= ajv.compile<T>(schema));
}

/** 'unknown': read as is, its checks are the handler's (e.g. channel, whose refusal has its own message). */
export type FieldType = 'string' | 'boolean' | 'object' | 'unknown';

type TypeOf<T extends FieldType> = T extends 'string' ? string : T extends 'boolean' ? boolean : T extends 'object' ? JsonObject : unknown;

/** The typed body of a schema: every field optional, null as sent. */
export type BodyOf<F extends Record<string, FieldType>> = { [K in keyof F]?: TypeOf<F[K]> | null };

const ARTICLE: Record<string, string> = { string: 'a string', boolean: 'a boolean', object: 'an object' };

export function bodySchema<const F extends Record<string, FieldType>>(fields: F): BodyCheck<BodyOf<F>> {
  const properties: Record<string, object> = {};
  for (const [name, type] of Object.entries(fields)) properties[name] = type === 'unknown' ? {} : { type, nullable: true };
  const validator = compiledOnFirstUse<BodyOf<F>>({ type: 'object', properties });
  return withFields(fieldNames(Object.keys(fields)), (body) => {
    const validate = validator();
    if (!validate(body)) throw apiError('validation_failed', describe(validate.errors?.[0]));
    return body;
  });
}

/** A check that first names the body's members as its fields, as the original's decoder matches them. */
export function withFields<B>(fields: FieldNames, check: (body: JsonObject) => B): BodyCheck<B> {
  return Object.assign((body: JsonObject) => check(underFieldNames(body, fields)), { fields });
}

function describe(error: ErrorObject | undefined): string {
  const field = error?.instancePath.replace(/^\//, '') || 'body';
  const expected = error?.keyword === 'type' ? String(error.params.type) : '';
  return `${field} must be ${ARTICLE[expected] ?? 'valid'}`;
}

/**
 * The /token grants' bodies: strings, null read as absent (the original decodes these fields into Go
 * strings, which null leaves empty). Another type is refused before, as Go's decoder refuses it
 * (routes/token.ts); ajv's own wording ("password must be string") stays for a grant declaring more.
 */
export function grantSchema<const N extends string>(...names: N[]): BodyCheck<{ [K in N]?: string | null }> {
  const validator = compiledOnFirstUse<{ [K in N]?: string | null }>({
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, { type: 'string', nullable: true }])),
  });
  return withFields(fieldNames(names), (body) => {
    const validate = validator();
    if (!validate(body)) {
      const error = validate.errors?.[0];
      throw apiError('validation_failed', `${error?.instancePath.replace(/^\//, '') || 'body'} ${error?.message ?? 'is invalid'}`);
    }
    return body;
  });
}
