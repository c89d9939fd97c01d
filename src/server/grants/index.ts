// The /token grants by grant_type.
import type { Grant } from './grant.js';
import { password } from './password.js';
import { pkce } from './pkce.js';
import { refreshToken } from './refresh-token.js';
import { web3 } from './web3.js';

export const GRANTS = new Map<string, Grant>([password, refreshToken, pkce, web3].map((g) => [g.grantType, g]));
