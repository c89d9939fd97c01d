// GET /health — the original's body, so existing health checks keep matching (docs/api.md#get-health).
import { VERSION } from '../version.js';
import type { Handler } from '../http/types.js';

const BODY = JSON.stringify({
  version: VERSION,
  name: 'GoTrue',
  description: 'GoTrue is a user registration and authentication API',
});

export const health: Handler = () => ({ body: BODY, headers: { 'Content-Type': 'application/json' } });
