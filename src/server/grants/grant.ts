// The shape every /token grant module exports (docs/architecture.md#grants-share-one-shape): its grant_type, its body schema, its handler,
// which receives the body the schema checked.
import type { BodyCheck, ApiRequest, ApiResponse } from '../http/types.js';
import type { AppContext } from '../context.js';

export interface Grant<B = unknown> {
  grantType: string;
  schema: BodyCheck<B>;
  /** checks the original makes before it reads the body at all, so a body that does not parse comes after them */
  beforeBody?(ctx: AppContext): void;
  handle(req: ApiRequest, ctx: AppContext, body: B): Promise<ApiResponse> | ApiResponse;
}
