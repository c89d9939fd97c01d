// A software WebAuthn authenticator for tests: what navigator.credentials.create() and .get() would return
// from a real authenticator, built from a key of node:crypto (ES256 unless told ES384 or PS256). Attestation
// objects (fmt "none") and COSE keys are CBOR-encoded with the encoder @simplewebauthn/server exposes (its
// helpers' isoCBOR), so the bytes are real CBOR and the signatures real ECDSA or RSA-PSS over
// authenticatorData ‖ SHA-256(clientDataJSON).
import { constants, createHash, createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';

const USER_PRESENT = 0x01;
const USER_VERIFIED = 0x04;
const BACKUP_ELIGIBLE = 0x08;
const ATTESTED_CREDENTIAL_DATA = 0x40;

/** What a ceremony may be made to lie about, to test that the server refuses it. */
export interface Tamper {
  /** clientDataJSON.origin (default: the authenticator's origin) */
  origin?: string;
  /** the rp id whose SHA-256 goes into authenticatorData (default: the authenticator's rp id) */
  rpId?: string;
  /** clientDataJSON.challenge (default: the options' challenge) */
  challenge?: string;
  /** clientDataJSON.type */
  type?: string;
}

/** The signature algorithms this authenticator can make a credential for. */
export type Algorithm = 'ES256' | 'ES384' | 'PS256';

export interface AuthenticatorOptions {
  rpId: string;
  origin: string;
  counterStep?: number;
  algorithm?: Algorithm;
  /** the bytes of the credential ID it makes (default 32; WebAuthn allows at most 1023) */
  credentialIdLength?: number;
}

interface Key {
  credentialId: Buffer;
  cosePublicKey: Uint8Array;
  /** the signature over `data`, as the credential's algorithm makes it */
  sign(data: Buffer): Buffer;
}

export class SoftwareAuthenticator {
  readonly rpId: string;
  readonly origin: string;
  /** the signature counter this authenticator last used; get() adds counterStep before signing */
  signCount = 0;
  counterStep: number;
  /** the BE flag of its authenticator data (a synced passkey sets it); may be flipped between ceremonies */
  backupEligible = false;
  /** the AAGUID its attested credential data names: zero, as with attestation "none", unless a model is given */
  aaguid: Buffer = Buffer.alloc(16);
  private readonly key: Key;
  private userHandle: string | null = null;

  constructor(options: AuthenticatorOptions, key?: Key) {
    this.rpId = options.rpId;
    this.origin = options.origin;
    this.counterStep = options.counterStep ?? 1;
    this.key = key ?? newKey(options.algorithm ?? 'ES256', options.credentialIdLength ?? 32);
  }

  get credentialId(): string {
    return this.key.credentialId.toString('base64url');
  }

  /** Another authenticator holding the same private key and counter: what a cloned device would be. */
  clone(): SoftwareAuthenticator {
    const copy = new SoftwareAuthenticator({ rpId: this.rpId, origin: this.origin, counterStep: this.counterStep }, this.key);
    copy.signCount = this.signCount;
    copy.userHandle = this.userHandle;
    copy.backupEligible = this.backupEligible;
    copy.aaguid = this.aaguid;
    return copy;
  }

  /** navigator.credentials.create(): a new discoverable credential for options.user, attestation "none". */
  create(options: PublicKeyCredentialCreationOptionsJSON, tamper: Tamper = {}): RegistrationResponseJSON {
    if ((options.excludeCredentials ?? []).some((c) => c.id === this.credentialId)) {
      throw new Error('InvalidStateError: this authenticator already holds a credential for the user');
    }
    this.userHandle = options.user.id;
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.key.credentialId.length);
    const authData = Buffer.concat([
      this.rpIdHash(tamper.rpId),
      Buffer.from([USER_PRESENT | USER_VERIFIED | ATTESTED_CREDENTIAL_DATA | this.backupFlags()]),
      counter(this.signCount),
      this.aaguid,
      idLength,
      this.key.credentialId,
      this.key.cosePublicKey,
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, Uint8Array | string | Map<string, string>>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', new Uint8Array(authData)],
      ]),
    );
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      response: {
        clientDataJSON: this.clientData('webauthn.create', options.challenge, tamper).toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /**
   * What a server stored when this authenticator registered for the user some other way (before the
   * service's present settings, say): the credential id and COSE public key. Sign-ins then name the user.
   */
  registeredElsewhere(userId: string): { credentialId: Buffer; publicKey: Buffer } {
    this.userHandle = Buffer.from(userId, 'utf8').toString('base64url');
    return { credentialId: this.key.credentialId, publicKey: Buffer.from(this.key.cosePublicKey) };
  }

  /** navigator.credentials.get(): an assertion over the options' challenge, the counter moved on by counterStep. */
  get(options: PublicKeyCredentialRequestOptionsJSON, tamper: Tamper = {}): AuthenticationResponseJSON {
    if (!this.userHandle) throw new Error('NotAllowedError: no credential on this authenticator (create() first)');
    const allowed = options.allowCredentials ?? [];
    if (allowed.length > 0 && !allowed.some((c) => c.id === this.credentialId)) throw new Error('NotAllowedError: credential not allowed');
    this.signCount += this.counterStep;
    const flags = USER_PRESENT | USER_VERIFIED | this.backupFlags();
    const authData = Buffer.concat([this.rpIdHash(tamper.rpId), Buffer.from([flags]), counter(this.signCount)]);
    const clientData = this.clientData('webauthn.get', options.challenge, tamper);
    const signature = this.key.sign(Buffer.concat([authData, createHash('sha256').update(clientData).digest()]));
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      response: {
        clientDataJSON: clientData.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: this.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  private backupFlags(): number {
    return this.backupEligible ? BACKUP_ELIGIBLE : 0;
  }

  private rpIdHash(rpId = this.rpId): Buffer {
    return createHash('sha256').update(rpId, 'utf8').digest();
  }

  private clientData(type: string, challenge: string, tamper: Tamper): Buffer {
    return Buffer.from(
      JSON.stringify({
        type: tamper.type ?? type,
        challenge: tamper.challenge ?? challenge,
        origin: tamper.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
  }
}

function newKey(algorithm: Algorithm, credentialIdLength: number): Key {
  const credentialId = randomBytes(credentialIdLength);
  const bytes = (b64url: string | undefined) => new Uint8Array(Buffer.from(b64url!, 'base64url'));
  if (algorithm === 'PS256') {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = publicKey.export({ format: 'jwk' });
    // COSE_Key of an RSA key for PS256: kty 3, alg -37, n, e.
    const cosePublicKey = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 3],
        [3, -37],
        [-1, bytes(jwk.n)],
        [-2, bytes(jwk.e)],
      ]),
    );
    // RSASSA-PSS with SHA-256 and a salt as long as the hash, as WebAuthn's PS256 is verified.
    const sign = (data: Buffer) =>
      createSign('sha256').update(data).sign({ key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
    return { credentialId, cosePublicKey, sign };
  }
  const { curve, crv, alg, hash } = EC_KEYS[algorithm];
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: curve });
  const jwk = publicKey.export({ format: 'jwk' });
  // COSE_Key of an EC2 key: kty 2, alg, crv, x, y.
  const cosePublicKey = isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, alg],
      [-1, crv],
      [-2, bytes(jwk.x)],
      [-3, bytes(jwk.y)],
    ]),
  );
  // ECDSA signatures in DER, the form WebAuthn assertions carry.
  return { credentialId, cosePublicKey, sign: (data) => createSign(hash).update(data).sign(privateKey) };
}

/** The curve, COSE ids and hash of each ECDSA algorithm. */
const EC_KEYS = {
  ES256: { curve: 'P-256', crv: 1, alg: -7, hash: 'sha256' },
  ES384: { curve: 'P-384', crv: 2, alg: -35, hash: 'sha384' },
};

function counter(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}
