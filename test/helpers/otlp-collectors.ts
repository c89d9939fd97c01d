// Real OTLP collectors for the telemetry tests: an OTLP/HTTP server and an OTLP/gRPC server on free local
// ports, plain or over TLS, each handing every export request to the test and answering it with an empty response.
import type { Test } from 'tap';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';

/** A collector's own certificate and key (PEM): it then serves TLS, at an https:// URL; with `clientCa`, only to clients it signs. */
export interface CollectorTls {
  cert: Buffer;
  key: Buffer;
  clientCa?: Buffer;
}

/** The collector's base URL; `received` sees each request with its whole body and returns the status to answer. */
export async function startHttpCollector(
  t: Test,
  received: (req: http.IncomingMessage, body: Buffer) => number,
  tls?: CollectorTls,
): Promise<string> {
  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const status = received(req, Buffer.concat(chunks));
      res.writeHead(status, status === 200 ? { 'content-type': 'application/x-protobuf' } : {}).end();
    });
  };
  const server = tls
    ? https.createServer(
        { cert: tls.cert, key: tls.key, ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}) },
        handle,
      )
    : http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The OTLP services a gRPC collector can serve, by the name their Export method's path carries. */
export type GrpcService = 'trace.v1.TraceService' | 'metrics.v1.MetricsService';

/** The collector's URL; `received` sees each Export call (its request's bytes and its metadata) of the services given. */
export async function startGrpcCollector(
  t: Test,
  services: readonly GrpcService[],
  received: (service: GrpcService, call: grpc.ServerUnaryCall<Buffer, Buffer>) => void,
  tls?: CollectorTls,
): Promise<string> {
  const server = new grpc.Server();
  for (const service of services) {
    const method = {
      path: `/opentelemetry.proto.collector.${service}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (bytes: Buffer) => bytes,
      requestDeserialize: (bytes: Buffer) => bytes,
      responseSerialize: () => Buffer.alloc(0),
      responseDeserialize: (bytes: Buffer) => bytes,
    };
    const handler = (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
      received(service, call);
      done(null, Buffer.alloc(0));
    };
    server.addService({ Export: method }, { Export: handler });
  }
  const credentials = tls
    ? grpc.ServerCredentials.createSsl(tls.clientCa ?? null, [{ private_key: tls.key, cert_chain: tls.cert }], Boolean(tls.clientCa))
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
  );
  t.teardown(() => server.forceShutdown());
  return `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
}
