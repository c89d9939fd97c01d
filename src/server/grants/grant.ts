// The shape every /token grant module exports (STYLE rule 3): its grant_type, its body schema, its handler.
import type { BodyCheck } from '../http/validate.js';
import type { Handler } from '../http/types.js';

export interface Grant {
  grantType: string;
  schema: BodyCheck;
  handle: Handler;
}
