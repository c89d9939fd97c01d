// POST /token?grant_type=...: picks the grant module by the query's grant_type and checks its body schema.
import { apiError } from '../errors.js';
import { GRANTS } from '../grants/index.js';
import type { Handler } from '../http/types.js';

export const token: Handler = async (req, ctx) => {
  const grantType = req.query.get('grant_type');
  const grant = grantType ? GRANTS.get(grantType) : undefined;
  if (!grant) throw apiError('unsupported_grant_type');
  return grant.handle(req, ctx, grant.schema(req.json()));
};
