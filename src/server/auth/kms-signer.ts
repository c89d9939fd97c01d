// Access tokens signed by an AWS KMS key (docs/tokens-and-sessions.md#aws-kms-signing-keys): the SHA-256 of the
// JWS signing input goes to KMS Sign (MessageType DIGEST, RSASSA_PKCS1_V1_5_SHA_256) as the original sends it, so
// a large token never meets KMS's message size limit. One KMS client per JWT service, that is per HTTP thread.
import { createHash, verify, type KeyObject } from 'node:crypto';
import type { KMSClient, SignCommand } from '@aws-sdk/client-kms';
import { apiError, type ApiError } from '../errors.js';
import type { Config } from '../config/types.js';
import type { KmsKeyRef } from './kms-key.js';
import { agentFor } from '../outbound-proxy/active.js';

export interface KmsSigningKey {
  kms: KmsKeyRef;
  /** the public key of the KMS key, as JWT_KEYS gives it: every signature is checked with it before use */
  verifyKey: KeyObject;
}

interface Sdk {
  client: KMSClient;
  SignCommand: typeof SignCommand;
}

/** Signs with the KMS key: (header, claims) → compact JWS, or an ApiError (500 refused, 503 unavailable). */
export function createKmsSigner(key: KmsSigningKey, settings: Config['jwt']['kms']): (header: object, claims: object) => Promise<string> {
  // The SDK costs ~200 ms and ~20 MB to load: only a thread whose signing key is in KMS loads it, once.
  const sdk: Promise<Sdk> = import('@aws-sdk/client-kms').then((m) => ({
    client: new m.KMSClient(clientConfig(key.kms, settings)),
    SignCommand: m.SignCommand,
  }));
  sdk.catch(() => {}); // a failed load is reported by the first signature
  const timeoutMs = settings.timeoutSeconds * 1000;

  return async (header, claims) => {
    const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const digest = createHash('sha256').update(input).digest();
    const signature = await signDigest(await loaded(sdk), key.kms.arn, digest, timeoutMs);
    // A KMS key other than the one whose public half JWT_KEYS publishes would sign tokens nobody can verify.
    if (!verify('sha256', Buffer.from(input), key.verifyKey, signature))
      throw withCause(
        apiError('token_signing_failed'),
        new Error(`the signature of ${key.kms.arn} does not verify with its public JWK in JWT_KEYS`),
      );
    return `${input}.${signature.toString('base64url')}`;
  };
}

/**
 * Region from the ARN; endpoint, credentials and profile from our settings, else the SDK's defaults (its
 * credential chain; docs/differences.md names what it still reads from the process environment). The SDK
 * sends with node:https, which no proxy setting reaches by itself: its agent is the egress proxy's when the
 * endpoint goes through one (docs/settings.md#outbound-proxy), as the original's SDK does.
 */
function clientConfig(kms: KmsKeyRef, settings: Config['jwt']['kms']) {
  const { endpoint, accessKeyId, secretAccessKey, sessionToken, profile } = settings;
  const target = new URL(endpoint || `https://kms.${kms.region}.amazonaws.com`);
  const agent = agentFor(target, undefined);
  return {
    region: kms.region,
    ...(endpoint ? { endpoint } : {}),
    // Given, not left to the SDK to find in the process environment, which a configuration file does not change.
    ...(profile ? { profile } : {}),
    ...(agent ? { requestHandler: target.protocol === 'https:' ? { httpsAgent: agent } : { httpAgent: agent } } : {}),
    ...(accessKeyId ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } } : {}),
  };
}

async function loaded(sdk: Promise<Sdk>): Promise<Sdk> {
  try {
    return await sdk;
  } catch (err) {
    throw withCause(apiError('token_signing_failed'), err);
  }
}

/** One Sign call, retries included, bounded by JWT_KMS_TIMEOUT: the request is aborted and never awaited past it. */
async function signDigest(sdk: Sdk, arn: string, digest: Buffer, timeoutMs: number): Promise<Buffer> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new Error(`AWS KMS did not answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
  });
  const command = new sdk.SignCommand({
    KeyId: arn,
    Message: digest,
    MessageType: 'DIGEST',
    SigningAlgorithm: 'RSASSA_PKCS1_V1_5_SHA_256',
  });
  try {
    const out = await Promise.race([sdk.client.send(command, { abortSignal: abort.signal }), timedOut]);
    if (!out.Signature?.length) throw new Error('AWS KMS answered without a signature');
    return Buffer.from(out.Signature);
  } catch (err) {
    throw withCause(apiError(unavailable(err, abort.signal.aborted) ? 'token_signing_unavailable' : 'token_signing_failed'), err);
  } finally {
    clearTimeout(timer);
  }
}

const OUTAGES = new Set(['ThrottlingException', 'LimitExceededException', 'DependencyTimeoutException', 'KMSInternalException']);

/**
 * An outage, worth retrying: no answer (timeout, refused, reset), throttling, or KMS failing inside. Anything
 * KMS refuses (AccessDeniedException, a disabled or unknown key, a wrong key usage) or no credentials is the
 * operator's to fix, a 500.
 */
function unavailable(err: unknown, timedOut: boolean): boolean {
  if (timedOut) return true;
  const e = err as { name?: string; $fault?: string; $metadata?: { httpStatusCode?: number } };
  if (e.name && OUTAGES.has(e.name)) return true;
  if (e.$fault === 'server') return true;
  if (e.name === 'CredentialsProviderError') return false;
  const status = e.$metadata?.httpStatusCode;
  return status === undefined || status >= 500;
}

/** The cause goes to the request's error log line (http/server.ts); the client sees the table's message and an error_id. */
function withCause(error: ApiError, cause: unknown): ApiError {
  Object.defineProperty(error, 'cause', { value: cause, enumerable: true });
  return error;
}
