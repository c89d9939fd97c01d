// The answers the guard writes itself, in the service's error shape ({code, error_code, msg}, rendered by
// http/render-error.ts), always closing the connection: after a broken request the byte stream can no
// longer be trusted to say where the next request begins.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type net from 'node:net';
import { apiError, type ApiError } from '../errors.js';
import { renderError } from '../http/render-error.js';
import type { Refusal } from './request-head.js';

export function refusalError(refusal: Refusal): ApiError {
  switch (refusal.kind) {
    case 'malformed':
      return apiError('http_malformed', `Malformed HTTP request: ${refusal.reason}`);
    case 'too_large':
      return apiError('http_head_too_large', `Request header fields too large: ${refusal.reason}`);
    case 'method':
      return apiError('method_not_allowed');
    case 'version':
      return apiError('http_version_not_supported');
  }
}

/** The whole HTTP/1.1 answer, head and JSON body, as bytes to write. */
export function refusalBytes(err: ApiError): Buffer {
  const rendered = renderError(err, undefined, randomUUID());
  const body = Buffer.from(rendered.body);
  const lines = [
    `HTTP/1.1 ${rendered.status} ${STATUS_CODES[rendered.status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${body.length}`,
    'Connection: close',
    `Date: ${new Date().toUTCString()}`,
    ...Object.entries(rendered.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  if (err.status === 405) lines.push('Allow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

/**
 * Half-closes the client's connection and keeps reading for `lingerMs`, dropping what comes, so that the
 * client is not reset before it reads the answer just written.
 */
export function lingerThenClose(client: net.Socket, lingerMs: number): void {
  client.end();
  client.resume();
  setTimeout(() => client.destroy(), lingerMs).unref();
}
