// Authorization codes: 32 random bytes, base64url. Only the SHA-256 hex is stored (ours; the original
// stores the code), so a database read never yields a usable code.
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../crypto/tokens.js';

export const newAuthorizationCode = (): string => randomBytes(32).toString('base64url');

export const codeHash = (code: string): string => sha256Hex(code);
