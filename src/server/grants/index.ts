// The /token grants by grant_type.
import type { Grant } from './grant.js';
import { password } from './password.js';
import { pkce } from './pkce.js';
import { refreshToken } from './refresh-token.js';

export const GRANTS = new Map<string, Grant>([password, refreshToken, pkce].map((g) => [g.grantType, g]));
