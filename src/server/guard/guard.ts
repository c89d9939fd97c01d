// The HTTP guard: the service's public listener, in the supervisor thread. It accepts every client
// connection, checks each request head before uWS sees it (relay.ts) and hands the connection's traffic
// to one HTTP thread over a Unix socket, round robin. It exists because the uWS build the service runs
// (20.30) drops many malformed or merely unusual requests without an answer and loses request heads over
// 4 KiB that arrive in more than one read (docs/http-guard.md).
import net from 'node:net';
import type { Logger } from 'pino';
import { relay } from './relay.js';

export interface GuardOptions {
  host: string;
  port: number;
  headTimeoutMs: number;
  bodyIdleMs: number;
  keepAliveMs: number;
  upstreamIdleMs: number;
  log: Logger;
}

export interface Guard {
  /** Starts accepting on the public port (once the HTTP threads can answer); resolves with the port. */
  listen(): Promise<number>;
  /** the Unix socket of HTTP thread `index`, or null while it is down or being replaced */
  setUpstream(index: number, path: string | null): void;
  /** Stops accepting; connections already open go on until their thread closes them. */
  stopAccepting(): Promise<void>;
  /** Closes every connection still open. */
  destroy(): void;
}

const LINGER_MS = 2000;

export function createGuard(options: GuardOptions): Guard {
  const upstreams: Array<string | null> = [];
  const open = new Set<net.Socket>();
  let next = 0;

  const connectUpstream = (tried: Set<string>) => {
    for (let i = 0; i < upstreams.length; i++) {
      const path = upstreams[(next + i) % upstreams.length];
      // A slot not set yet is a hole, not null: a reload's threads may start listening out of order.
      if (!path || tried.has(path)) continue;
      next = (next + i + 1) % upstreams.length;
      return { socket: net.connect(path), id: path };
    }
    return null;
  };

  const server = net.createServer({ noDelay: true }, (client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    relay(client, {
      headTimeoutMs: options.headTimeoutMs,
      bodyIdleMs: options.bodyIdleMs,
      keepAliveMs: options.keepAliveMs,
      upstreamIdleMs: options.upstreamIdleMs,
      lingerMs: LINGER_MS,
      connectUpstream,
      refused: (err, socket) =>
        options.log.info(
          { status: err.status, error_code: err.errorCode, reason: err.message, remote_addr: socket.remoteAddress },
          'request refused by the HTTP guard',
        ),
    });
  });
  return {
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          resolve((server.address() as net.AddressInfo).port);
        });
      }),
    setUpstream(index, path) {
      upstreams[index] = path;
    },
    // close()'s callback waits for every connection to end; stopping to accept is immediate.
    stopAccepting: () => {
      server.close();
      return Promise.resolve();
    },
    destroy() {
      for (const socket of open) socket.destroy();
    },
  };
}
