// What a JWT verification refused with: the JwtError's message, for tests that pin the exact reason.
import { JwtError } from '../../dist/server/auth/jwt.js';

export async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof JwtError) return error.message;
    throw error;
  }
  throw new Error('expected a JwtError');
}
