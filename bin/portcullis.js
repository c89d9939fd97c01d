#!/usr/bin/env node
// Runs the compiled service. `npm start` builds first; an installed package ships dist/.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/server/main.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('portcullis: dist/ is missing; run `npm run build` first');
  process.exit(1);
}
await import(entry.href);
