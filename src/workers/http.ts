// HTTP thread entry: one uWS App, on a Unix socket of its own behind the HTTP guard (or on the shared
// public port, SO_REUSEPORT spreading connections between threads, when the guard is off)
// with its own pg pool. Talks to the supervisor with small messages: listening, drain/drained, fail.
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../server/config/types.js';
import { createLogger } from '../server/observability/log.js';
import { createAppContext, closeAppContext } from '../server/build-context.js';
import type { AppResources } from '../server/context.js';
import { Router } from '../server/http/router.js';
import { MOUNTS, ROUTES } from '../server/routes.js';
import { createHttpServer, type ListenOn } from '../server/http/server.js';
import { closeOutboundProxy, useOutboundProxy } from '../server/outbound-proxy/active.js';

export interface HttpWorkerData extends AppResources {
  config: Config;
  /** the public port, or this thread's Unix socket behind the HTTP guard */
  listen: ListenOn;
  index: number;
  /** pino-pretty lines (development on a terminal), as the supervisor decided */
  prettyLogs?: boolean;
}
export type ToWorker = { type: 'drain'; timeoutMs: number } | { type: 'fail' } | { type: 'metrics'; id: number };
export type FromWorker =
  | { type: 'listening'; port: number }
  | { type: 'drained' }
  | { type: 'crashed'; message: string }
  | { type: 'metrics'; id: number; metrics: unknown[] };

const data = workerData as HttpWorkerData;
const port = parentPort!;
const log = createLogger(data.config.log, { thread: data.index }, { pretty: data.prettyLogs });
// Before the context: its mailer, SMS sender and hooks call out through whatever this sets.
await useOutboundProxy(data.config.outbound);
const ctx = await createAppContext(data.config, data, log);
// The route table is the thread's, not the context's: handlers never need it, and the context stays a leaf.
const server = createHttpServer(new Router(ROUTES, MOUNTS), ctx, log);
const send = (message: FromWorker) => port.postMessage(message);

let closing: Promise<void> | null = null;
// A thread must never die with live uWS handles: Node aborts the whole process ("uv_loop_close() while
// having open handles"). So every exit path closes the server and lets the thread's loop run empty.
function shutDown(timeoutMs: number): Promise<void> {
  closing ??= server
    .drain(timeoutMs)
    .then(() => closeAppContext(ctx))
    .then(() => closeOutboundProxy())
    .catch((err) => log.error({ err }, 'shutdown failed'))
    .then(() => new Promise<void>((resolve) => log.flush(() => resolve())));
  return closing;
}

process.on('uncaughtException', (err) => {
  log.fatal({ err }, 'HTTP thread crashed; closing it so the supervisor can replace it');
  send({ type: 'crashed', message: err.message });
  void shutDown(1000).then(() => port.close());
});
process.on('unhandledRejection', (err) => {
  throw err;
});

port.on('message', (message: ToWorker) => {
  if (message.type === 'drain')
    void shutDown(message.timeoutMs).then(() => {
      send({ type: 'drained' });
      port.close();
    });
  // Fault injection for the supervision test: an error nobody catches, thrown from this thread's loop.
  if (message.type === 'fail')
    setImmediate(() => {
      throw new Error('fault injected by the supervisor');
    });
  if (message.type === 'metrics') void ctx.metrics.snapshot().then((metrics) => send({ type: 'metrics', id: message.id, metrics }));
});

const actual = await server.listen(data.listen);
send({ type: 'listening', port: actual });
