// The service provider's key pair (SAML_PRIVATE_KEY, SAML_PRIVATE_KEY_NEXT: base64 of a DER PKCS#1 RSA key,
// as the original takes them) and the self-signed certificate that carries each public key in the SP
// metadata (docs/sso-saml.md#keys). The certificate's fields are fixed, like the original's, so that the
// same key always yields the same certificate and an IdP's trust survives a restart or a swap of services.
import { createPrivateKey } from 'node:crypto';
import forge from 'node-forge';
import type { Config } from '../config/types.js';
import { samlKeyBase64 } from './key-check.js';

export interface SamlKey {
  /** PKCS#8 PEM, as the XML signing and decryption libraries take it */
  privateKeyPem: string;
  /** the certificate's PEM and its base64 DER body (what metadata's X509Certificate holds) */
  certificatePem: string;
  certificateBase64: string;
}

export interface SamlKeys {
  current: SamlKey;
  next: SamlKey | null;
}

const cache = new WeakMap<Config, SamlKeys>();

/** The keys of a configuration (checked at start by config/cross-field.ts with key-check.ts), built once per configuration. */
export function samlKeys(config: Config): SamlKeys {
  let keys = cache.get(config);
  if (!keys) {
    const host = certificateHost(config);
    const encrypt = config.saml.allowEncryptedAssertions;
    keys = {
      current: buildKey(config.saml.privateKey, host, encrypt),
      next: config.saml.privateKeyNext ? buildKey(config.saml.privateKeyNext, host, encrypt) : null,
    };
    cache.set(config, keys);
  }
  return keys;
}

function certificateHost(config: Config): string {
  try {
    return new URL(config.saml.externalUrl || config.api.externalUrl).hostname;
  } catch {
    return 'localhost';
  }
}

function buildKey(value: string, host: string, encrypt: boolean): SamlKey {
  const key = createPrivateKey({ key: Buffer.from(samlKeyBase64(value), 'base64'), format: 'der', type: 'pkcs1' });
  const privateKeyPem = key.export({ format: 'pem', type: 'pkcs8' }).toString();
  const forgeKey = forge.pki.privateKeyFromPem(privateKeyPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(forgeKey.n, forgeKey.e);
  cert.serialNumber = '00';
  cert.validity.notBefore = new Date(0);
  cert.validity.notAfter = new Date(Date.UTC(2170, 0, 1));
  const subject = [{ name: 'commonName', value: `SAML 2.0 Certificate for ${host}` }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, dataEncipherment: encrypt },
    { name: 'subjectAltName', altNames: [{ type: 2, value: `_samlsp.${host}` }] },
  ]);
  cert.sign(forgeKey, forge.md.sha256.create());
  const certificatePem = forge.pki.certificateToPem(cert);
  const certificateBase64 = forge.util.encode64(forge.asn1.toDer(forge.pki.certificateToAsn1(cert)).getBytes());
  return { privateKeyPem, certificatePem, certificateBase64 };
}
