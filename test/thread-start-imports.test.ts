// An HTTP thread loads only what most requests need when it starts: the WebAuthn library, the QR code
// generator, the SAML libraries, the SMTP client and undici wait for the first request that uses them
// (docs/architecture.md#threads). A new thread, and a
// replacement for a crashed one, listens that much sooner. Watched in a fresh Node process through a
// module resolve hook, which sees every import the thread's entry (src/workers/http.ts) makes.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');

// The resolve hook runs on Node's loader thread and reports each resolved URL over a message port; the
// child drains the port synchronously once its imports are done and prints the list.
const hooks = `
let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  port.postMessage(resolved.url);
  return resolved;
}`;

const child = `
import { register } from 'node:module';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), {
  data: { port: port2 },
  transferList: [port2],
});
// The HTTP thread's own entry: its whole static import graph is resolved and run before its body, which
// then stops at once (there is no workerData outside a worker thread). That stop is expected.
await import('./dist/workers/http.js').catch(() => {});
const urls = [];
for (let m = receiveMessageOnPort(port1); m; m = receiveMessageOnPort(port1)) urls.push(m.message);
console.log(JSON.stringify(urls));
`;

function loadedPackages(): Set<string> {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', child], { cwd: root, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the child failed: ${run.stderr}`);
  const urls = JSON.parse(run.stdout.trim().split('\n').pop()!) as string[];
  const packages = urls
    .map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
    .filter((name): name is string => name !== undefined);
  return new Set(packages);
}

t.test('an HTTP thread starts without the WebAuthn, QR code, SAML, SMTP and undici libraries', async (t) => {
  const packages = loadedPackages();
  // The hook does see the thread's libraries: the ones every request needs are there.
  for (const needed of ['@trufflesuite/uws-js-unofficial', 'jose', 'pg', 'ajv']) {
    t.ok(packages.has(needed), `${needed} is loaded at start`);
  }
  t.notOk(packages.has('@simplewebauthn/server'), '@simplewebauthn/server waits for a WebAuthn or passkey request');
  t.notOk(packages.has('qrcode'), 'qrcode waits for a TOTP enrolment');
  for (const saml of ['@node-saml/node-saml', 'node-forge']) t.notOk(packages.has(saml), `${saml} waits for a SAML request`);
  t.notOk(packages.has('nodemailer'), 'nodemailer waits for the first mail');
  t.notOk(packages.has('undici'), 'undici waits for the first call to a stored custom provider');
});
