#!/usr/bin/env node
// `npm start` builds first, but only when dist/ is older than what it is built from (src/, tsconfig.json,
// package.json): a second start does not pay for the TypeScript compiler. A build that fails stops the
// start with the compiler's own output.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const at = (...parts) => path.join(root, ...parts);

/** The newest modification time of a file or, for a directory, of anything in it. */
function newest(file) {
  if (!existsSync(file)) return 0;
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(file).reduce((max, name) => Math.max(max, newest(path.join(file, name))), stat.mtimeMs);
}

const built = existsSync(at('dist', 'server', 'main.js')) ? statSync(at('dist', 'server', 'main.js')).mtimeMs : 0;
const sources = Math.max(newest(at('src')), newest(at('tsconfig.json')), newest(at('package.json')));
if (built && built >= sources) process.exit(0);

const tsc = spawnSync(process.execPath, [at('node_modules', 'typescript', 'bin', 'tsc'), '-p', at('tsconfig.json')], { stdio: 'inherit' });
process.exit(tsc.status ?? 1);
