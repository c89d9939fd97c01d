// The connections of outbound calls under a proxy rule (rules.ts): fetch's dispatcher picks, per request,
// the proxy's tunnel or the direct connection it was given; jose's key-set fetches (node:https) get an
// agent that tunnels through the proxy. Loaded only when a proxy is set (active.ts), so undici and the
// tunnelling agent stay out of the threads of deployments that have none.
import type { Agent as HttpAgent } from 'node:http';
import { Dispatcher, ProxyAgent } from 'undici';
import { HttpsProxyAgent } from 'https-proxy-agent';
import type { ProxyFor } from './rules.js';

/** One tunnel per proxy, shared by every origin it serves; kept alive like the direct pools. */
const tunnels = new Map<string, ProxyAgent>();
const agents = new Map<string, HttpAgent>();

function tunnelTo(proxy: URL): ProxyAgent {
  let tunnel = tunnels.get(proxy.href);
  if (!tunnel) tunnels.set(proxy.href, (tunnel = new ProxyAgent({ uri: proxy.href })));
  return tunnel;
}

/** fetch's dispatcher: a request whose origin the rule sends through a proxy goes there, any other to `direct`. */
export class ProxyRouting extends Dispatcher {
  constructor(
    private readonly rule: ProxyFor,
    private readonly direct: Dispatcher,
  ) {
    super();
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandlers): boolean {
    const proxy = options.origin === undefined ? null : this.rule(new URL(String(options.origin)));
    return (proxy ? tunnelTo(proxy) : this.direct).dispatch(options, handler);
  }

  // The thread's dispatchers live as long as the thread; fetch never closes them.
  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const closed = Promise.all([this.direct.close(), ...[...tunnels.values()].map((t) => t.close())]).then(() => undefined);
    if (!callback) return closed;
    void closed.then(callback, callback);
  }

  override destroy(): Promise<void>;
  override destroy(err: Error | null): Promise<void>;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null, callback: () => void): void;
  override destroy(errOrCallback?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    const err = typeof errOrCallback === 'function' ? null : (errOrCallback ?? null);
    const done = typeof errOrCallback === 'function' ? errOrCallback : callback;
    const destroyed = Promise.all([this.direct.destroy(err), ...[...tunnels.values()].map((t) => t.destroy(err))]).then(() => undefined);
    if (!done) return destroyed;
    void destroyed.then(done, done);
  }
}

/** The node:http(s) agent that reaches any URL through `proxy` (a CONNECT tunnel, TLS to the origin inside it). */
export function tunnellingAgent(proxy: URL): HttpAgent {
  let agent = agents.get(proxy.href);
  if (!agent) agents.set(proxy.href, (agent = new HttpsProxyAgent(proxy.href, { keepAlive: true })));
  return agent;
}
