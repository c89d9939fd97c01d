// Body schemas: compiled once by ajv when a module is loaded; a failed check is a 400 validation_failed
// naming the field. Schemas check types only: the original's specific messages (missing email, weak
// password...) stay in the handlers, in the original's order.
import { Ajv, type ErrorObject } from 'ajv';
import { badRequest } from '../errors.js';

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });

export type BodyCheck = (body: Record<string, unknown>) => void;

export function bodySchema(properties: Record<string, object>): BodyCheck {
  const validate = ajv.compile({ type: 'object', properties });
  return (body) => {
    if (!validate(body)) throw badRequest(describe(validate.errors?.[0]));
  };
}

function describe(error: ErrorObject | undefined): string {
  if (!error) return 'Invalid request body';
  const field = error.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'body';
  return `${field} ${error.message ?? 'is invalid'}`;
}

export const STRING = { type: 'string' };
export const OBJECT = { type: 'object' };
export const BOOLEAN = { type: 'boolean' };
