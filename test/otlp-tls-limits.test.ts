// The OpenTelemetry TLS files and span limits given only in a configuration file (`-c`), as the original's
// loader puts them in its environment for its SDK: a collector serving TLS with a throwaway CA is reached
// over HTTP and gRPC when the file names the CA (and not without it), and an attribute value length limit
// in the file shortens what the collector receives. The collectors are real servers.
import t from 'tap';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { pino } from 'pino';
import { testServiceEnv } from './helpers/server.js';
import { startGrpcCollector, startHttpCollector } from './helpers/otlp-collectors.js';
import { throwawayTls } from './helpers/throwaway-tls.js';
import { loadConfig } from '../dist/server/config/load.js';
import { createTracing } from '../dist/server/observability/tracing.js';

const tls = throwawayTls(t);
const arrivals: Array<{ path?: string; body: Buffer }> = [];
const record = (req: { url?: string }, body: Buffer) => (arrivals.push({ path: req.url, body }), 200);

const plainUrl = await startHttpCollector(t, record);
const httpsUrl = await startHttpCollector(t, record, tls);
const grpcRecord = (_: unknown, call: { request: Buffer }) => void arrivals.push({ path: 'grpc', body: call.request });
const grpcsUrl = await startGrpcCollector(t, ['trace.v1.TraceService'], grpcRecord, tls);
const grpcUrl = await startGrpcCollector(t, ['trace.v1.TraceService'], grpcRecord);
// Collectors that serve only clients with a certificate the CA signs.
const mutual = { ...tls, clientCa: tls.ca };
const mutualHttpsUrl = await startHttpCollector(t, record, mutual);
const mutualGrpcsUrl = await startGrpcCollector(t, ['trace.v1.TraceService'], grpcRecord, mutual);
/** The same address under the other scheme. */
const otherScheme = (url: string) => (url.startsWith('https://') ? url.replace('https://', 'http://') : url.replace('http://', 'https://'));

const dir = mkdtempSync(path.join(os.tmpdir(), 'otlp-tls-limits-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const log = pino({ level: 'silent' });

/** The configuration with `env` in the process's place and `file` as the `-c` file. */
function configWith(env: Record<string, string>, file: string) {
  const configFile = path.join(dir, `${Math.random().toString(36).slice(2)}.env`);
  writeFileSync(configFile, file);
  return loadConfig({ env: { ...testServiceEnv('postgres://unused@127.0.0.1:1/unused', 1), ...env }, configFile, envFile: null });
}

/** One request's span, recorded and flushed by a stop: what reached the collector. */
async function traceOnce(config: ReturnType<typeof loadConfig>, route = '/settings') {
  const from = arrivals.length;
  const tracing = await createTracing(config, log);
  const now = Date.now();
  tracing.record({ method: 'GET', route, params: {}, path: route, status: 200, start: now - 5, end: now });
  await tracing.shutdown();
  return arrivals.slice(from);
}

t.test('OTLP/HTTP to a TLS collector: the CA given in the file is trusted', async (t) => {
  const env = { AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: httpsUrl };
  t.same(await traceOnce(configWith(env, '')), [], 'without the CA the collector is not trusted: nothing arrives');
  const got = await traceOnce(configWith(env, `OTEL_EXPORTER_OTLP_CERTIFICATE=${tls.caFile}\n`));
  t.equal(got.length, 1, 'with it, the export arrives');
  t.equal(got[0]?.path, '/v1/traces');
  // The signal's own path wins over the general one.
  const own = `OTEL_EXPORTER_OTLP_CERTIFICATE=${path.join(dir, 'missing.pem')}\nOTEL_EXPORTER_OTLP_TRACES_CERTIFICATE=${tls.caFile}\n`;
  t.equal((await traceOnce(configWith(env, own))).length, 1, "the traces' own CA file is used");
});

t.test('OTLP/gRPC to a TLS collector (https://): the CA given in the file is trusted', async (t) => {
  const env = { AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: grpcsUrl, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' };
  t.same(await traceOnce(configWith(env, '')), [], 'without the CA nothing arrives');
  const got = await traceOnce(configWith(env, `OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE=${tls.caFile}\n`));
  t.equal(got.length, 1, 'with it, the export arrives');
  t.equal(got[0]?.path, 'grpc');
});

t.test('a collector that asks for a client certificate gets the one the file names', async (t) => {
  for (const [protocol, url] of [
    ['http/protobuf', mutualHttpsUrl],
    ['grpc', mutualGrpcsUrl],
  ]) {
    const env = { AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol };
    const ca = `OTEL_EXPORTER_OTLP_CERTIFICATE=${tls.caFile}\n`;
    t.same(await traceOnce(configWith(env, ca)), [], `${protocol}: without a client certificate nothing arrives`);
    const client = `${ca}OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE=${tls.clientCertFile}\nOTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY=${tls.clientKeyFile}\n`;
    t.equal((await traceOnce(configWith(env, client))).length, 1, `${protocol}: with it, the export arrives`);
  }
});

t.test('a plain http:// collector is reached whatever TLS files are named', async (t) => {
  const config = configWith(
    { AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: plainUrl },
    `OTEL_EXPORTER_OTLP_CERTIFICATE=${tls.caFile}\n`,
  );
  t.equal((await traceOnce(config)).length, 1);
});

t.test('OTEL_EXPORTER_OTLP_INSECURE in the file overrides the URL’s scheme, as in the original', async (t) => {
  for (const [protocol, plain, secured] of [
    ['http/protobuf', plainUrl, httpsUrl],
    ['grpc', grpcUrl, grpcsUrl],
  ]) {
    const env = (url: string) => ({
      AUTH_TRACING_ENABLED: 'true',
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    });
    const https = env(otherScheme(plain)); // https:// to a collector without TLS
    t.same(await traceOnce(configWith(https, '')), [], `${protocol}: https:// speaks TLS to a plain collector: nothing arrives`);
    t.equal((await traceOnce(configWith(https, 'OTEL_EXPORTER_OTLP_INSECURE=true\n'))).length, 1, `${protocol}: INSECURE=true: no TLS`);
    const own = 'OTEL_EXPORTER_OTLP_INSECURE=false\nOTEL_EXPORTER_OTLP_TRACES_INSECURE=TRUE\n';
    t.equal((await traceOnce(configWith(https, own))).length, 1, `${protocol}: the traces' own wins`);
    const http = env(otherScheme(secured)); // http:// to a TLS collector
    const tlsFile = `OTEL_EXPORTER_OTLP_CERTIFICATE=${tls.caFile}\n`;
    t.same(await traceOnce(configWith(http, tlsFile)), [], `${protocol}: http:// to a TLS collector: nothing arrives`);
    const secure = `${tlsFile}OTEL_EXPORTER_OTLP_INSECURE=false\n`;
    t.equal((await traceOnce(configWith(http, secure))).length, 1, `${protocol}: INSECURE=false: TLS, the CA trusted`);
  }
});

/** The string values of the attributes of every span in an OTLP/JSON export body. */
function attributeValues(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  const request = JSON.parse(body.toString()) as {
    resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ attributes: Array<{ key: string; value: { stringValue?: string } }> }> }> }>;
  };
  for (const resource of request.resourceSpans)
    for (const scope of resource.scopeSpans)
      for (const span of scope.spans)
        for (const a of span.attributes) if (a.value.stringValue !== undefined) out[a.key] = a.value.stringValue;
  return out;
}

t.test('span limits in the file: attribute values are cut to the length given, the span’s own limit first', async (t) => {
  const env = { AUTH_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: plainUrl, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
  const whole = await traceOnce(configWith(env, ''), '/a-rather-long-route');
  t.equal(attributeValues(whole[0].body)['http.route'], '/a-rather-long-route', 'no limit: the whole value');
  const cut = await traceOnce(configWith(env, 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=6\n'), '/a-rather-long-route');
  t.equal(attributeValues(cut[0].body)['http.route'], '/a-rat', 'the general limit cuts it');
  const own = await traceOnce(
    configWith(env, 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=6\nOTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT=3\n'),
    '/a-rather-long-route',
  );
  t.equal(attributeValues(own[0].body)['http.route'], '/a-', "the span's own limit wins");
  const counted = await traceOnce(configWith(env, 'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT=1\n'), '/a-rather-long-route');
  t.equal(Object.keys(attributeValues(counted[0].body)).length, 1, 'one attribute kept');
});

t.test('the limits are checked and default to not set', async (t) => {
  t.throws(() => configWith({}, 'OTEL_SPAN_EVENT_COUNT_LIMIT=-2\n'), /OTEL_SPAN_EVENT_COUNT_LIMIT/);
  t.match(configWith({}, '').tracing.limits, { attributeCount: -1, spanLinkCount: -1 });
});
