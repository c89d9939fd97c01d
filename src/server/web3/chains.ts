// The two chains grant_type=web3 signs in with (docs/web3.md): per chain, its setting, its message rules,
// how its signature travels (the format refusals are the original's 400 validation_failed messages) and
// how it is verified.
import { apiError } from '../errors.js';
import type { Config, Web3ChainConfig } from '../config/types.js';
import type { ChainRules, SignInMessage } from './message.js';
import { ethereumRules, verifyEthereumSignature } from './ethereum.js';
import { solanaRules, verifySolanaSignature } from './solana.js';

export interface Chain<S = unknown> {
  name: 'solana' | 'ethereum';
  /** as the refusal texts name it */
  title: 'Solana' | 'Ethereum';
  settings(config: Config): Web3ChainConfig;
  disabled: 'web3_solana_disabled' | 'web3_ethereum_disabled';
  rules: ChainRules;
  /** the signature as sent, decoded; throws the original's validation_failed when it cannot be */
  decodeSignature(signature: string): S;
  verify(message: SignInMessage, signature: S): boolean;
}

const solana: Chain<Uint8Array> = {
  name: 'solana',
  title: 'Solana',
  settings: (config) => config.external.web3Solana,
  disabled: 'web3_solana_disabled',
  rules: solanaRules,
  // 64 bytes in base64 or base64url, padded (88 characters) or not (86), as auth-js sends it.
  decodeSignature(signature) {
    const length = Buffer.byteLength(signature);
    if (length !== 86 && length !== 88) {
      throw apiError('validation_failed', 'signature must be 64 bytes encoded as base64 with or without padding');
    }
    // Padding comes off the end only; line breaks anywhere are skipped, as the original's decoder skips them.
    const url = signature
      .replace(/=+$/, '')
      .replaceAll('+', '-')
      .replaceAll('/', '_')
      .replace(/[\r\n]/g, '');
    if (!/^[A-Za-z0-9_-]*$/.test(url) || url.length % 4 === 1) {
      throw apiError('validation_failed', 'signature does not contain valid base64 characters');
    }
    return Buffer.from(url, 'base64url');
  },
  verify: (message, signature) => verifySolanaSignature(message.raw, message.domain, signature, message.address),
};

const ethereum: Chain<string> = {
  name: 'ethereum',
  title: 'Ethereum',
  settings: (config) => config.external.web3Ethereum,
  disabled: 'web3_ethereum_disabled',
  rules: ethereumRules,
  // 65 bytes as 130 hex digits after "0x"; without the prefix it passes this check and matches no address.
  decodeSignature(signature) {
    if (Buffer.byteLength(signature.startsWith('0x') ? signature.slice(2) : signature) !== 130) {
      throw apiError('validation_failed', 'signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string');
    }
    return signature;
  },
  verify: (message, signature) => verifyEthereumSignature(message.raw, signature, message.address),
};

export const CHAINS: ReadonlyMap<string, Chain> = new Map<string, Chain>([
  ['solana', solana],
  ['ethereum', ethereum],
]);
