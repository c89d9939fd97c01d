// This thread's outbound proxy (docs/settings.md#outbound-proxy): set once when an HTTP thread starts, before
// its context is built, and read by the calls that choose their own connections (custom providers' restricted
// ones, the KMS signer's node:https calls). Every other call uses fetch's global dispatcher, which the setting replaces here.
import type { Agent as HttpAgent } from 'node:http';
import { proxyRule, type ProxyFor, type ProxySettings } from './rules.js';

interface ActiveProxy {
  rule: ProxyFor;
  /** fetch's dispatcher that sends what the rule proxies through it and the rest to `direct` */
  routed(direct: unknown): unknown;
  agentThrough(proxy: URL, target: URL): HttpAgent;
  close(): Promise<void>;
}

let active: ActiveProxy | null = null;

/** Routes this thread's outbound HTTP as the settings say; nothing changes (and nothing loads) without a proxy. */
export async function useOutboundProxy(settings: ProxySettings): Promise<void> {
  const rule = proxyRule(settings);
  if (!rule) return;
  const [{ Agent, setGlobalDispatcher }, { ProxyRouting, agentThrough, closeProxies }] = await Promise.all([
    import('undici'),
    import('./routing.js'),
  ]);
  active = { rule, routed: (direct) => new ProxyRouting(rule, direct as InstanceType<typeof Agent>), agentThrough, close: closeProxies };
  // Node's fetch reads the dispatcher undici's setGlobalDispatcher installs (one global slot for both).
  setGlobalDispatcher(new ProxyRouting(rule, new Agent()));
}

/** Closes this thread's connections to the proxy, when it ends. */
export async function closeOutboundProxy(): Promise<void> {
  await active?.close();
}

/** The proxy `url`'s call goes through, or null when it goes direct (no proxy set, or NO_PROXY and loopback). */
export function proxyFor(url: URL): URL | null {
  return active?.rule(url) ?? null;
}

/** fetch's dispatcher for calls that would use `direct`: the same, with proxied origins sent through the proxy. */
export function viaProxy<D>(direct: D): D {
  return active ? (active.routed(direct) as D) : direct;
}

/** The node:http(s) agent for a call to `url`: through its proxy, or `direct` (undefined: Node's default). */
export function agentFor<A extends HttpAgent | undefined>(url: URL, direct: A): HttpAgent | A {
  const proxy = proxyFor(url);
  return proxy && active ? active.agentThrough(proxy, url) : direct;
}
