// The route table: one line per endpoint. Handlers live in routes/ (one file per endpoint family).
import type { Route } from './types.js';
import { health } from './routes/health.js';
import { settings } from './routes/settings.js';

export const ROUTES: Route[] = [
  { method: 'GET', path: '/health', handler: health, quiet: true },
  { method: 'GET', path: '/settings', handler: settings },
];
