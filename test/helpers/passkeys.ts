// Passkey ceremonies over HTTP with the software authenticator, for the passkey and WebAuthn tests.
import type { TestService, Reply } from './server.js';
import { SoftwareAuthenticator, type Algorithm, type Tamper } from './authenticator.js';

export const RP_ID = 'localhost';
export const RP_ORIGIN = 'http://localhost:5173';

/** The settings of a service with passkeys on, for the relying party above. */
export const PASSKEY_ENV = {
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_PASSKEY_ENABLED: 'true',
  AUTH_WEBAUTHN_RP_ID: RP_ID,
  AUTH_WEBAUTHN_RP_DISPLAY_NAME: 'Portcullis tests',
  AUTH_WEBAUTHN_RP_ORIGINS: `${RP_ORIGIN},https://app.example.com`,
};

export const newAuthenticator = (options: { counterStep?: number; algorithm?: Algorithm; credentialIdLength?: number } = {}) =>
  new SoftwareAuthenticator({ rpId: RP_ID, origin: RP_ORIGIN, ...options });

/** Registration options, then the authenticator's attestation sent to /verify. */
export async function register(api: TestService, token: string, authenticator: SoftwareAuthenticator, tamper?: Tamper): Promise<Reply> {
  const options = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  if (options.status !== 200) throw new Error(`registration options: ${options.status} ${options.text}`);
  const credential = authenticator.create(options.body.options, tamper);
  return api.request('POST', '/passkeys/registration/verify', { token, body: { challenge_id: options.body.challenge_id, credential } });
}

/** A passkey the user registered before the service's present settings: its row, written directly. */
export async function storePasskey(api: TestService, userId: string, authenticator: SoftwareAuthenticator): Promise<void> {
  const { credentialId, publicKey } = authenticator.registeredElsewhere(userId);
  await api.db.query('insert into webauthn_credentials (user_id, credential_id, public_key) values ($1, $2, $3)', [
    userId,
    credentialId,
    publicKey,
  ]);
}

export async function authenticationOptions(api: TestService): Promise<{ challenge_id: string; options: any; expires_at: number }> {
  const res = await api.request('POST', '/passkeys/authentication/options', { body: {} });
  if (res.status !== 200) throw new Error(`authentication options: ${res.status} ${res.text}`);
  return res.body;
}

/** Authentication options, then the authenticator's assertion sent to /verify. */
export async function signInWithPasskey(api: TestService, authenticator: SoftwareAuthenticator, tamper?: Tamper): Promise<Reply> {
  const { challenge_id, options } = await authenticationOptions(api);
  const credential = authenticator.get(options, tamper);
  return api.request('POST', '/passkeys/authentication/verify', { body: { challenge_id, credential } });
}
