// The connections of outbound calls under a proxy rule (rules.ts): fetch's dispatcher picks, per request,
// the proxy or the direct connection it was given; node:http(s) calls (the KMS signer's) get an agent
// through the proxy. As the original's client: an https:// target through a CONNECT tunnel, an http:// one
// sent to the proxy as a plain request in absolute form (many proxies refuse CONNECT to plain-text ports),
// and the proxy URL's user info, a user name alone too, as its Basic credentials. Loaded only when a proxy
// is set (active.ts), so undici and the proxy agents stay out of the threads of deployments that have none.
import type { Agent as HttpAgent } from 'node:http';
import { Dispatcher, ProxyAgent } from 'undici';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { HttpProxyAgent } from 'http-proxy-agent';
import type { ProxyFor } from './rules.js';

/** One dispatcher per proxy, shared by every origin it serves and by every ProxyRouting of the thread. */
const proxies = new Map<string, ProxyAgent>();
const agents = new Map<string, HttpAgent>();

function through(proxy: URL): ProxyAgent {
  let agent = proxies.get(proxy.href);
  if (!agent) {
    // undici sends user info as credentials only with both a name and a password; Go sends whatever is there.
    const credentials =
      proxy.username || proxy.password ? `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}` : '';
    agent = new ProxyAgent({
      uri: proxy.origin,
      proxyTunnel: false,
      ...(credentials ? { token: `Basic ${Buffer.from(credentials).toString('base64')}` } : {}),
    });
    proxies.set(proxy.href, agent);
  }
  return agent;
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
    return (proxy ? through(proxy) : this.direct).dispatch(options, handler);
  }

  // Closes its own direct connections only: the proxies' dispatchers are the thread's, shared (closeProxies).
  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    const closed = this.direct.close();
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
    const destroyed = this.direct.destroy(err);
    if (!done) return destroyed;
    void destroyed.then(done, done);
  }
}

/** The node:http(s) agent that reaches `target` through `proxy`: a CONNECT tunnel for https, absolute-form requests for http. */
export function agentThrough(proxy: URL, target: URL): HttpAgent {
  const key = `${target.protocol} ${proxy.href}`;
  let agent = agents.get(key);
  if (!agent) {
    agent =
      target.protocol === 'https:'
        ? new HttpsProxyAgent(proxy.href, { keepAlive: true })
        : new HttpProxyAgent(proxy.href, { keepAlive: true });
    agents.set(key, agent);
  }
  return agent;
}

/** Closes the thread's proxy connections (a thread that ends). */
export async function closeProxies(): Promise<void> {
  await Promise.all([...proxies.values()].map((p) => p.close()));
  for (const agent of agents.values()) agent.destroy();
  proxies.clear();
  agents.clear();
}
