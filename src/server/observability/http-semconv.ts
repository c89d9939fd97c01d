// The OpenTelemetry HTTP semantic conventions as the original's instrumentation (otelhttp) applies them to
// each request, for the request span's attributes (tracing.ts) and the original's request histogram
// (metrics.ts). The service sits behind a TLS proxy and speaks HTTP/1.1 (the guard hands 1.0 on as 1.1),
// so the scheme and protocol version are fixed.

/** What a request's span says of it. */
export interface RequestFacts {
  method: string;
  /** the route in parametrised form, and its parameters */
  route: string;
  params: Record<string, string>;
  status: number;
  /** the path as requested, the Host header and the client's address */
  path?: string;
  host?: string;
  clientAddress?: string;
}

/** The methods the conventions name; any other is `_OTHER`, with the method itself kept apart on spans. */
const STANDARD_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

export const standardMethod = (method: string) => (STANDARD_METHODS.has(method) ? method : '_OTHER');

/**
 * The attributes otelhttp records the request duration with, under the conventions' dotted keys, less the
 * server address and port it takes from the Host header (a client would make series without end). The
 * Prometheus exporter writes each key with `_` for `.` (metrics.ts); OTLP pushes them as they are.
 */
export const SERVER_METRIC_KEYS = [
  'http.request.method',
  'http.response.status_code',
  'http.route',
  'url.scheme',
  'network.protocol.name',
  'network.protocol.version',
] as const;

export function serverMetricAttributes(method: string, route: string, status: number): Record<(typeof SERVER_METRIC_KEYS)[number], string> {
  return {
    'http.request.method': standardMethod(method),
    'http.response.status_code': String(status),
    'http.route': route,
    'url.scheme': 'http',
    'network.protocol.name': 'http',
    'network.protocol.version': '1.1',
  };
}

/** A dotted key as a Prometheus label name. */
export const labelName = (key: string) => key.replaceAll('.', '_');

/**
 * The request span's attributes: the specification's (`http.method`, `http.status_code`, `http.route` and
 * each `http.route.param.<key>`, the original's singular name) and the conventions' that otelhttp adds.
 * Not `user_agent.original`, which the original replaces by "stripped" before otelhttp sees it.
 */
export function requestSpanAttributes(trace: RequestFacts): Record<string, string | number> {
  const method = standardMethod(trace.method);
  // The metric's attributes less network.protocol.name, which otelhttp puts on spans only when it is not "http".
  const { 'network.protocol.name': _http, ...shared } = serverMetricAttributes(trace.method, trace.route, trace.status);
  const attributes: Record<string, string | number> = {
    'http.method': trace.method,
    'http.status_code': trace.status,
    ...shared,
    'http.response.status_code': trace.status,
  };
  if (method !== trace.method) attributes['http.request.method_original'] = trace.method;
  if (trace.path) attributes['url.path'] = trace.path;
  if (trace.clientAddress) attributes['client.address'] = trace.clientAddress;
  const server = serverOf(trace.host);
  if (server) {
    attributes['server.address'] = server.address;
    if (server.port !== undefined) attributes['server.port'] = server.port;
  }
  for (const [key, value] of Object.entries(trace.params)) attributes[`http.route.param.${key}`] = value;
  return attributes;
}

/** The Host header's name, and its port when it is not HTTP's 80 (as otelhttp reports them), by the URL parser. */
function serverOf(host: string | undefined): { address: string; port?: number } | null {
  if (!host) return null;
  let url: URL;
  try {
    url = new URL(`http://${host}`);
  } catch {
    return null;
  }
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return null;
  const address = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return url.port ? { address, port: Number(url.port) } : { address };
}
