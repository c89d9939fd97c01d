// The JWT service built from settings in a test, and what a verification refused with: the JwtError's
// message, for tests that pin the exact reason.
import type { JsonWebKey } from 'node:crypto';
import { createJwtService, JwtError } from '../../dist/server/auth/jwt.js';

/** The JWT settings of a service with `secret` and the given keys; `extra` overrides any other setting. */
export function jwtService(secret: string, keys: JsonWebKey[] = [], validMethods: string[] = [], extra: Record<string, unknown> = {}) {
  return createJwtService({
    secret,
    exp: 3600,
    aud: 'authenticated',
    issuer: '',
    keyId: '',
    adminGroupName: 'admin',
    defaultGroupName: 'authenticated',
    adminRoles: ['service_role'],
    kms: { endpoint: '', accessKeyId: '', secretAccessKey: '', sessionToken: '', profile: '', timeoutSeconds: 3 },
    keys,
    validMethods,
    ...extra,
  });
}

export async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof JwtError) return error.message;
    throw error;
  }
  throw new Error('expected a JwtError');
}
