// Wallets for the Web3 sign-in tests: real key pairs generated per test, signing as wallets do — an
// Ethereum account signs EIP-191 personal messages (secp256k1 over keccak-256, r||s||v with v 27/28), a
// Solana account signs the message bytes with ed25519 (or, as a Ledger does, the off-chain envelope).
// Each also offers the interface @supabase/auth-js calls (an EIP-1193 provider; signMessage + publicKey).
import { generateKeyPairSync, sign } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { base58 } from '@scure/base';

export interface EthereumAccount {
  /** 0x + 40 lower-case hex digits, as auth-js writes it into the message */
  address: string;
  /** personal_sign: 0x + 130 hex digits */
  sign(message: string): string;
  /** what auth-js signInWithWeb3({chain: 'ethereum', wallet}) calls */
  provider: { request(args: { method: string; params?: unknown }): Promise<unknown> };
}

export function ethereumAccount(chainIdHex = '0x1'): EthereumAccount {
  const secret = secp256k1.utils.randomSecretKey();
  const address = `0x${Buffer.from(keccak_256(secp256k1.getPublicKey(secret, false).subarray(1)).subarray(12)).toString('hex')}`;
  const signBytes = (message: Uint8Array) => {
    const prefix = Buffer.from(`\x19Ethereum Signed Message:\n${message.length}`);
    const recovered = secp256k1.sign(keccak_256(Buffer.concat([prefix, message])), secret, { prehash: false, format: 'recovered' });
    // noble puts the recovery id first; Ethereum puts it last, plus 27.
    return `0x${Buffer.concat([recovered.subarray(1), Buffer.from([recovered[0] + 27])]).toString('hex')}`;
  };
  return {
    address,
    sign: (message) => signBytes(Buffer.from(message, 'utf8')),
    provider: {
      async request({ method, params }) {
        if (method === 'eth_requestAccounts') return [address];
        if (method === 'eth_chainId') return chainIdHex;
        if (method === 'personal_sign') return signBytes(Buffer.from((params as string[])[0].slice(2), 'hex'));
        throw new Error(`unexpected wallet method ${method}`);
      },
    },
  };
}

export interface SolanaAccount {
  /** base58 of the 32-byte ed25519 public key */
  address: string;
  sign(message: string): Uint8Array;
  /** a Ledger's signature: over the off-chain message envelope */
  signAsLedger(message: string, domain: string): Uint8Array;
  /** what auth-js signInWithWeb3({chain: 'solana', wallet}) calls */
  wallet: { publicKey: { toBase58(): string }; signMessage(message: Uint8Array, encoding?: string): Promise<Uint8Array> };
  /** a wallet-standard wallet that builds and signs the message itself (signIn), as Phantom does */
  signInWallet: {
    signIn(input: {
      domain?: string;
      uri?: string;
      statement?: string;
      issuedAt?: string;
    }): Promise<{ signedMessage: Uint8Array; signature: Uint8Array }>;
  };
}

export function solanaAccount(): SolanaAccount {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const address = base58.encode(raw);
  const signBytes = (bytes: Uint8Array) => new Uint8Array(sign(null, bytes, privateKey));
  return {
    address,
    sign: (message) => signBytes(Buffer.from(message, 'utf8')),
    signAsLedger(message, domain) {
      const body = Buffer.from(message, 'utf8');
      const appDomain = Buffer.alloc(32);
      Buffer.from(domain).copy(appDomain, 0, 0, 32);
      const length = Buffer.alloc(2);
      length.writeUInt16LE(body.length);
      const prefix = Buffer.concat([Buffer.from([0xff]), Buffer.from('solana offchain'), Buffer.from([0])]);
      return signBytes(Buffer.concat([prefix, appDomain, Buffer.from([0, 1]), raw, length, body]));
    },
    wallet: {
      publicKey: { toBase58: () => address },
      signMessage: async (message) => signBytes(message),
    },
    signInWallet: {
      async signIn(input) {
        const text = signInMessage('Solana', address, {
          domain: input.domain,
          uri: input.uri,
          statement: input.statement ?? null,
          issuedAt: input.issuedAt,
        });
        const signedMessage = new TextEncoder().encode(text);
        return { signedMessage, signature: signBytes(signedMessage) };
      },
    },
  };
}

export interface MessageFields {
  domain?: string;
  statement?: string | null;
  uri?: string;
  version?: string;
  chainId?: string | null;
  nonce?: string | null;
  issuedAt?: Date | string;
  expirationTime?: Date | string;
  notBefore?: Date | string;
  resources?: string[];
}

const iso = (d: Date | string) => (typeof d === 'string' ? d : d.toISOString());

/** A SIWE (chain 'Ethereum') or SIWS (chain 'Solana') message laid out as EIP-4361 says. */
export function signInMessage(chain: 'Ethereum' | 'Solana', address: string, f: MessageFields = {}): string {
  const statement = f.statement === undefined ? 'Sign in to the test app' : f.statement;
  const chainId = f.chainId === undefined ? (chain === 'Ethereum' ? '1' : 'solana:mainnet') : f.chainId;
  const nonce = f.nonce === undefined ? 'a1b2c3d4e5f6' : f.nonce;
  return [
    `${f.domain ?? 'app.example.com'} wants you to sign in with your ${chain} account:`,
    address,
    '',
    ...(statement === null ? [] : [statement, '']),
    `URI: ${f.uri ?? 'https://app.example.com/login'}`,
    `Version: ${f.version ?? '1'}`,
    ...(chainId === null ? [] : [`Chain ID: ${chainId}`]),
    ...(nonce === null ? [] : [`Nonce: ${nonce}`]),
    `Issued At: ${iso(f.issuedAt ?? new Date())}`,
    ...(f.expirationTime ? [`Expiration Time: ${iso(f.expirationTime)}`] : []),
    ...(f.notBefore ? [`Not Before: ${iso(f.notBefore)}`] : []),
    ...(f.resources ? ['Resources:', ...f.resources.map((r) => `- ${r}`)] : []),
  ].join('\n');
}

/** auth-js's encoding of a Solana signature: base64url without padding. */
export const base64Url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
