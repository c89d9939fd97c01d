// The shape every /token grant module exports (STYLE rule 3): its grant_type, its body schema, its handler.
import type { BodyCheck } from '../validate.js';
import type { Handler } from '../types.js';

export interface Grant {
  grantType: string;
  schema: BodyCheck;
  handle: Handler;
}
