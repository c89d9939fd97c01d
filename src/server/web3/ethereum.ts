// Sign-In with Ethereum (docs/web3.md#ethereum): the message's rules, and its EIP-191 personal_sign
// signature checked by recovering the signer's key (secp256k1) and comparing its keccak-256 address with
// the message's, case-insensitively as the original does.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import type { ChainRules } from './message.js';

export const ethereumRules: ChainRules = {
  tag: 'siwe',
  header: ' wants you to sign in with your Ethereum account:',
  address: /^0x[a-fA-F0-9]{40}$/,
  addressRefusal: 'wallet address is not a valid Ethereum address',
  chainId: isEip155ChainId,
  zeroTimeIsAbsent: false,
  absentStatement: null,
};

/** A positive decimal integer within 64 bits, optionally signed (Go's strconv.Atoi, then > 0). */
function isEip155ChainId(value: string): boolean {
  if (!/^[+-]?\d+$/.test(value)) return false;
  const n = BigInt(value);
  return n > 0n && n <= 2n ** 63n - 1n;
}

/**
 * Whether `signature` (0x + 130 hex digits: r, s, v with v 0/1 or 27/28) was made over `message` by the
 * key of `address`. Anything malformed is simply not a match.
 */
export function verifyEthereumSignature(message: string, signature: string, address: string): boolean {
  if (!/^0[xX][0-9a-fA-F]{130}$/.test(signature)) return false;
  const bytes = Buffer.from(signature.slice(2), 'hex');
  const v = bytes[64] >= 27 ? bytes[64] - 27 : bytes[64];
  if (v > 3) return false;
  try {
    const recovered = secp256k1.Signature.fromBytes(Uint8Array.from([v, ...bytes.subarray(0, 64)]), 'recovered')
      .recoverPublicKey(personalMessageHash(message))
      .toBytes(false);
    const recoveredAddress = Buffer.from(keccak_256(recovered.subarray(1)).subarray(12)).toString('hex');
    return recoveredAddress === address.slice(2).toLowerCase();
  } catch {
    return false; // r or s out of range, or no point for this recovery id
  }
}

/** EIP-191 version 0x45: keccak-256 of "\x19Ethereum Signed Message:\n" + byte length + message. */
function personalMessageHash(message: string): Uint8Array {
  const body = Buffer.from(message, 'utf8');
  return keccak_256(Buffer.concat([Buffer.from(`\x19Ethereum Signed Message:\n${body.length}`, 'utf8'), body]));
}
