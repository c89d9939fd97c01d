// The /token grants by grant_type.
import type { Grant } from './grant.js';
import { password } from './password.js';

export const GRANTS = new Map<string, Grant>([password].map((g) => [g.grantType, g]));
