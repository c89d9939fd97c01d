// A stand-in for AWS KMS, which a test cannot run: the Sign operation over KMS's real wire format (AWS JSON
// 1.1: POST / with X-Amz-Target TrentService.Sign, base64 blobs, errors as {"__type", "message"} with 400).
// It really signs the digest it is sent, with an RSA private key the test made, as KMS does for
// RSASSA_PKCS1_V1_5_SHA_256 with MessageType DIGEST. A test switches it to refuse, to stall, or kills it.
import http from 'node:http';
import net from 'node:net';
import { generateKeyPairSync, privateEncrypt, constants, randomUUID, type KeyObject } from 'node:crypto';

export interface KmsRequest {
  target: string | undefined;
  contentType: string | undefined;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

export interface FakeKms {
  url: string;
  arn: string;
  /** the RSA public JWK of the key, as JWT_KEYS takes it: with "aws:kms:arn", a kid and key_ops ["sign"] */
  jwk: Record<string, unknown>;
  requests: KmsRequest[];
  /** 'sign' answers, 'deny' refuses with AccessDeniedException, 'stall' never answers (until released) */
  mode: 'sign' | 'deny' | 'stall';
  /** answers every stalled request with an error, so nothing stays open */
  release(): void;
  /** closes the listener and every connection: KMS is gone */
  kill(): Promise<void>;
  /** listens again on the same port */
  revive(): Promise<void>;
  stop(): Promise<void>;
}

// The DER DigestInfo prefix of SHA-256 (RFC 8017 9.2): PKCS #1 v1.5 signs prefix || digest.
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

export async function startFakeKms(region = 'eu-west-1'): Promise<FakeKms> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const arn = `arn:aws:kms:${region}:111122223333:key/${randomUUID()}`;
  const stalled = new Set<http.ServerResponse>();
  const sockets = new Set<net.Socket>();
  const fake: FakeKms = {
    url: '',
    arn,
    jwk: {
      ...publicKey.export({ format: 'jwk' }),
      kid: `kms-${randomUUID()}`,
      alg: 'RS256',
      use: 'sig',
      key_ops: ['sign'],
      'aws:kms:arn': arn,
    },
    requests: [],
    mode: 'sign',
    release() {
      for (const res of stalled) answer(res, 400, { __type: 'KMSInternalException', message: 'released' });
      stalled.clear();
    },
    kill: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      fake.release();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    revive: () => listen(port),
    stop: async () => {
      if (server.listening) await fake.kill();
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function handle(req: http.IncomingMessage, res: http.ServerResponse, text: string) {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return answer(res, 400, { __type: 'SerializationException', message: 'body is not JSON' });
    }
    const target = req.headers['x-amz-target'] as string | undefined;
    fake.requests.push({ target, contentType: req.headers['content-type'], authorization: req.headers.authorization, body });
    if (req.method !== 'POST' || req.url !== '/' || target !== 'TrentService.Sign')
      return answer(res, 400, { __type: 'UnknownOperationException', message: `unknown operation ${target}` });
    if (fake.mode === 'stall') return void stalled.add(res);
    if (fake.mode === 'deny')
      return answer(res, 400, {
        __type: 'AccessDeniedException',
        message: `User: arn:aws:iam::111122223333:user/portcullis is not authorized to perform: kms:Sign on resource: ${arn}`,
      });
    if (body.KeyId !== arn) return answer(res, 400, { __type: 'NotFoundException', message: `Key '${String(body.KeyId)}' does not exist` });
    if (body.MessageType !== 'DIGEST' || body.SigningAlgorithm !== 'RSASSA_PKCS1_V1_5_SHA_256')
      return answer(res, 400, { __type: 'ValidationException', message: 'unexpected MessageType or SigningAlgorithm' });
    const digest = Buffer.from(String(body.Message), 'base64');
    if (digest.length !== 32) return answer(res, 400, { __type: 'ValidationException', message: 'Digest is invalid length for algorithm' });
    answer(res, 200, {
      KeyId: arn,
      Signature: signDigest(privateKey, digest).toString('base64'),
      SigningAlgorithm: 'RSASSA_PKCS1_V1_5_SHA_256',
    });
  }

  let port = 0;
  async function listen(at: number) {
    await new Promise<void>((resolve) => server.listen(at, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
    fake.url = `http://127.0.0.1:${port}`;
  }
  await listen(0);
  return fake;
}

function signDigest(privateKey: KeyObject, digest: Buffer): Buffer {
  return privateEncrypt({ key: privateKey, padding: constants.RSA_PKCS1_PADDING }, Buffer.concat([SHA256_DIGEST_INFO, digest]));
}

function answer(res: http.ServerResponse, status: number, body: Record<string, unknown>) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.1',
    'x-amzn-requestid': randomUUID(),
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
