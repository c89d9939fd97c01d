// A custom access token hook endpoint for the bench, in a process of its own so that it does not share the
// bench's (autocannon's) event loop: it verifies each call's Standard Webhooks signature with the
// standardwebhooks package, as a hook author's endpoint would, and answers the claims with one added.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';

const CHILD = new URL('./hook-endpoint-child.mjs', import.meta.url);

/** Starts the endpoint; resolves { url, secret, stop() }. */
export async function startHookEndpoint() {
  const secret = `v1,whsec_${randomBytes(32).toString('base64')}`;
  const child = fork(CHILD, [], { env: { HOOK_SECRET: secret }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { port } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the hook endpoint exited (code ${code})`)));
  });
  return {
    url: `http://127.0.0.1:${port}/custom-access-token`,
    secret,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}
