// GET /sso/saml/metadata: this service provider's metadata for IdP administrators (docs/sso-saml.md#the-service-provider).
// Like the original: valid 48 hours (5 years with ?download=true, which also names a file); the signing
// key, the encryption key only with SAML_ALLOW_ENCRYPTED_ASSERTIONS, and during a key rotation the next
// certificate too, with a shorter cache; the persistent and email NameID formats; the ACS for posted responses and artifacts.
import { escapeXml } from './xml.js';
import { samlKeys, type SamlKey } from './keys.js';
import { spUrls } from './sp.js';
import type { Config } from '../config/types.js';

const HOUR = 3600 * 1000;

export function spMetadata(config: Config, download: boolean, now = new Date()): { xml: string; cacheControl: string } {
  const { current, next } = samlKeys(config);
  const urls = spUrls(config);
  const validUntil = download ? new Date(now.getTime() + 5 * 365.25 * 24 * HOUR) : new Date(now.getTime() + 48 * HOUR);
  const keys = [current, ...(next ? [next] : [])].flatMap((key) => [
    keyDescriptor('signing', key),
    ...(config.saml.allowEncryptedAssertions ? [keyDescriptor('encryption', key)] : []),
  ]);
  const attrs = `validUntil="${validUntil.toISOString()}"${next ? ' cacheDuration="PT1H"' : ''}`;
  const xml =
    `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" ${attrs} entityID="${escapeXml(urls.entityId)}">` +
    `<SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" WantAssertionsSigned="true">` +
    keys.join('') +
    '<NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</NameIDFormat>' +
    '<NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</NameIDFormat>' +
    `<AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${escapeXml(urls.acsUrl)}" index="1"></AssertionConsumerService>` +
    `<AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact" Location="${escapeXml(urls.acsUrl)}" index="2"></AssertionConsumerService>` +
    '</SPSSODescriptor></EntityDescriptor>';
  // IdPs and CDNs refetch sooner while a next key waits to be promoted.
  return { xml, cacheControl: next ? 'public, max-age=60' : 'public, max-age=600' };
}

function keyDescriptor(use: 'signing' | 'encryption', key: SamlKey): string {
  const methods =
    use === 'encryption'
      ? '<EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"></EncryptionMethod>' +
        '<EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc"></EncryptionMethod>' +
        '<EncryptionMethod Algorithm="http://www.w3.org/2009/xmlenc11#aes128-gcm"></EncryptionMethod>' +
        '<EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"></EncryptionMethod>'
      : '';
  return (
    `<KeyDescriptor use="${use}"><KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data>` +
    `<X509Certificate>${key.certificateBase64}</X509Certificate></X509Data></KeyInfo>${methods}</KeyDescriptor>`
  );
}
