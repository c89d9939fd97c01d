// The /token grants by grant_type.
import type { Grant } from './grant.js';
import { password } from './password.js';
import { pkce } from './pkce.js';

export const GRANTS = new Map<string, Grant>([password, pkce].map((g) => [g.grantType, g]));
