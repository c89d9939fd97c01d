// Sign-In with Solana (docs/web3.md#solana): the message's rules, and its ed25519 signature by the key
// the base58 address is. A wallet signs the message bytes themselves; a Ledger signs them wrapped in
// Solana's off-chain message envelope, which is accepted too, as the original does.
import { createPublicKey, verify } from 'node:crypto';
import { base58 } from '@scure/base';
import type { ChainRules } from './message.js';

export const solanaRules: ChainRules = {
  tag: 'siws',
  header: ' wants you to sign in with your Solana account:',
  address: /^[a-zA-Z0-9]{32,44}$/,
  addressRefusal: 'wallet address is not in base58 format',
  chainId: (value) => value === '' || /^solana:(main|dev|test|local)net$/.test(value),
  zeroTimeIsAbsent: true,
  absentStatement: '',
};

/** Whether the 64-byte `signature` was made over the message (plain or in the off-chain envelope) by `address`. */
export function verifySolanaSignature(message: string, domain: string, signature: Uint8Array, address: string): boolean {
  const publicKey = decodeAddress(address);
  // An address that is not 32 base58-encoded bytes is no key: no signature matches it (the original fails with a 500).
  if (!publicKey || signature.length !== 64) return false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
    const raw = Buffer.from(message, 'utf8');
    if (verify(null, raw, key, signature)) return true;
    const envelope = offChainEnvelope(raw, domain, publicKey);
    return envelope !== null && verify(null, envelope, key, signature);
  } catch {
    return false; // 32 bytes that are no curve point
  }
}

function decodeAddress(address: string): Uint8Array | null {
  try {
    const bytes = base58.decode(address);
    return bytes.length === 32 ? bytes : null;
  } catch {
    return null;
  }
}

/**
 * Solana's off-chain message format, version 0, as the original builds it: the signing-domain prefix
 * (0xff "solana offchain"), version 0, the message's domain in 32 bytes (cut or zero-padded), format 0
 * (ASCII), one signer and its key, the message length as 16-bit little-endian, then the message.
 */
function offChainEnvelope(raw: Buffer, domain: string, publicKey: Uint8Array): Buffer | null {
  if (raw.length > 0xffff) return null;
  const applicationDomain = Buffer.alloc(32);
  Buffer.from(domain, 'utf8').copy(applicationDomain, 0, 0, 32);
  const length = Buffer.alloc(2);
  length.writeUInt16LE(raw.length);
  return Buffer.concat([
    Buffer.from([0xff]),
    Buffer.from('solana offchain', 'ascii'),
    Buffer.from([0x00]),
    applicationDomain,
    Buffer.from([0x00, 0x01]),
    publicKey,
    length,
    raw,
  ]);
}
