// Secrets at rest (docs/mfa.md#secrets-at-rest): TOTP secrets and phone-factor codes are stored as an
// envelope naming the key that sealed them, in the original's format, so a GoTrue database with
// SECURITY_DB_ENCRYPTION keys reads here and the other way round:
//   {"key_id":"…","alg":"aes-gcm-hkdf","data":"<base64 ciphertext+tag>","nonce":"<base64 12 bytes>"}
// The AES-256-GCM key is HKDF-SHA256(key, no salt, info = the row's id): each row has its own key, and
// an envelope moved to another row does not open. The current key seals; every known key opens, so keys
// rotate by adding a new current key and keeping the old one among the decryption keys.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { Config } from '../config/types.js';

const ALG = 'aes-gcm-hkdf';
/**
 * The key id used when no SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY is configured: a key derived from
 * JWT_SECRET, so secrets are never stored in clear even on a default setup (docs/mfa.md#secrets-at-rest).
 */
export const JWT_SECRET_KEY_ID = 'portcullis-jwt-secret';

interface Envelope {
  key_id: string;
  alg: string;
  data: string;
  nonce: string;
}

export interface Opened {
  value: string;
  /** sealed with a key other than the current one (or not sealed at all) while there is a current key: seal it again when convenient */
  stale: boolean;
}

export interface SecretBox {
  /** the envelope text of `value`, bound to the row `rowId`; throws when there is no key to seal with */
  seal(rowId: string, value: string): string;
  /**
   * seal()'s envelope, or `value` as it is when no key is configured at all (JWT_KEYS without JWT_SECRET or
   * SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY): then the original stores it in clear too, and so does the service.
   */
  sealOrClear(rowId: string, value: string): string;
  /** the value of an envelope (or of a value stored in clear by an older setup); throws when no key opens it */
  open(rowId: string, stored: string): Opened;
  /** `stored` sealed for `rowId` when it is in clear; an envelope (any key's) unchanged. For moving rows in. */
  sealIfClear(rowId: string, stored: string): string;
}

const boxes = new WeakMap<object, SecretBox>();

/** The box for a configuration's keys, built once per configuration. */
export function secretBox(config: Pick<Config, 'security' | 'jwt'>): SecretBox {
  let box = boxes.get(config.security);
  if (!box) {
    box = buildBox(config);
    boxes.set(config.security, box);
  }
  return box;
}

function buildBox(config: Pick<Config, 'security' | 'jwt'>): SecretBox {
  const { encryptionKeyId, encryptionKey, decryptionKeys } = config.security.dbEncryption;
  const keys = new Map<string, Buffer>();
  if (config.jwt.secret) keys.set(JWT_SECRET_KEY_ID, jwtSecretKey(config.jwt.secret));
  for (const [id, key] of Object.entries(decryptionKeys)) keys.set(id, Buffer.from(key, 'base64url'));
  let currentId = JWT_SECRET_KEY_ID;
  if (encryptionKey) {
    currentId = encryptionKeyId;
    keys.set(encryptionKeyId, Buffer.from(encryptionKey, 'base64url'));
  }
  const current = keys.get(currentId);
  const box: SecretBox = {
    seal(rowId, value) {
      if (!current) throw new Error('no key to encrypt secrets at rest: set SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY or JWT_SECRET');
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', rowKey(current, rowId), nonce);
      const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      const envelope: Envelope = { key_id: currentId, alg: ALG, data: data.toString('base64'), nonce: nonce.toString('base64') };
      return JSON.stringify(envelope);
    },
    sealOrClear(rowId, value) {
      return current ? box.seal(rowId, value) : value;
    },
    open(rowId, stored) {
      const envelope = parseEnvelope(stored);
      if (!envelope) return { value: stored, stale: !!current };
      const key = keys.get(envelope.key_id);
      if (!key) throw new Error(`no decryption key with id "${envelope.key_id}" (SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS)`);
      const data = Buffer.from(envelope.data, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', rowKey(key, rowId), Buffer.from(envelope.nonce, 'base64'));
      decipher.setAuthTag(data.subarray(data.length - 16));
      const value = Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString('utf8');
      return { value, stale: !!current && envelope.key_id !== currentId };
    },
    sealIfClear(rowId, stored) {
      return parseEnvelope(stored) ? stored : box.seal(rowId, stored);
    },
  };
  return box;
}

function rowKey(key: Buffer, rowId: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), Buffer.from(rowId, 'utf8'), 32));
}

/** 256 bits from JWT_SECRET, one-way, labelled so that no other use of the secret yields the same bytes. */
function jwtSecretKey(secret: string): Buffer {
  return createHash('sha256').update('portcullis secrets at rest\0').update(secret).digest();
}

/** An envelope as the original writes it; anything else (a value stored in clear) is null. */
function parseEnvelope(stored: string): Envelope | null {
  if (!stored.startsWith('{')) return null;
  try {
    const e = JSON.parse(stored) as Partial<Envelope>;
    if (e.alg !== ALG || typeof e.key_id !== 'string' || !e.key_id || typeof e.data !== 'string' || typeof e.nonce !== 'string')
      return null;
    if (Buffer.from(e.nonce, 'base64').length !== 12 || Buffer.from(e.data, 'base64').length <= 16) return null;
    return e as Envelope;
  } catch {
    return null;
  }
}
