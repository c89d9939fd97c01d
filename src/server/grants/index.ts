// The /token grants by grant_type.
import type { Grant } from './grant.js';
import { password } from './password.js';
import { pkce } from './pkce.js';
import { refreshToken } from './refresh-token.js';
import { web3 } from './web3.js';
import { idToken } from './id-token.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each grant's body type is its own
export const GRANTS = new Map<string, Grant<any>>([password, refreshToken, pkce, web3, idToken].map((g) => [g.grantType, g]));
