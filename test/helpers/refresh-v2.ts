// The original service's v2 refresh-token format, written out here independently of the service's own
// code so that tests check the wire format itself: base64url (no padding) of
// 0x00 | session id (16) | uvarint counter | HMAC-SHA-256(key, all before)[0..16] | SHA-256(all before)[0..4].
import { createHash, createHmac } from 'node:crypto';

export interface DecodedV2 {
  version: number;
  sessionId: string;
  counter: number;
  signature: Buffer;
  checksumOk: boolean;
}

export function decodeV2(token: string): DecodedV2 {
  const bytes = Buffer.from(token, 'base64url');
  const hex = bytes.subarray(1, 17).toString('hex');
  const sessionId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  let counter = 0;
  let at = 17;
  for (let shift = 0; ; shift += 7) {
    const b = bytes[at++];
    counter += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
  }
  const checksum = createHash('sha256')
    .update(bytes.subarray(0, bytes.length - 4))
    .digest()
    .subarray(0, 4);
  return {
    version: bytes[0],
    sessionId,
    counter,
    signature: bytes.subarray(at, at + 16),
    checksumOk: checksum.equals(bytes.subarray(bytes.length - 4)) && bytes.length === at + 20,
  };
}

/** A token as the original mints it, for `counter` < 2^28 (enough for tests). */
export function mintV2(sessionId: string, counter: number, key: Buffer, tamper: { signature?: boolean } = {}): string {
  const varint: number[] = [];
  for (let rest = counter; ; rest = Math.floor(rest / 128)) {
    if (rest < 128) {
      varint.push(rest);
      break;
    }
    varint.push((rest % 128) | 0x80);
  }
  const head = Buffer.concat([Buffer.from([0]), Buffer.from(sessionId.replace(/-/g, ''), 'hex'), Buffer.from(varint)]);
  const signature = createHmac('sha256', key).update(head).digest().subarray(0, 16);
  if (tamper.signature) signature[0] ^= 0xff;
  const body = Buffer.concat([head, signature]);
  return Buffer.concat([body, createHash('sha256').update(body).digest().subarray(0, 4)]).toString('base64url');
}
