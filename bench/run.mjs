#!/usr/bin/env node
// `npm run bench [-- scenario ...]` (builds first) or `node bench/run.mjs [scenario ...]`: bench/README.md.
// Only modules that do not touch dist/ are imported before dist/ is known to exist.
import { existsSync } from 'node:fs';
import { readOptions } from './lib/options.mjs';

let options;
try {
  options = readOptions();
} catch (err) {
  console.error(`bench: ${err.message}`);
  process.exit(2);
}
if (!existsSync(new URL('../dist/server/service.js', import.meta.url))) {
  console.error('bench: dist/ is missing: run `npm run build` first (`npm run bench` builds by itself)');
  process.exit(1);
}
const { runAll } = await import('./lib/run-all.mjs');
if (!(await runAll(options))) process.exitCode = 1;
