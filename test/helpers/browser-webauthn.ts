// Just enough of a browser's WebAuthn surface (window, document, PublicKeyCredential with the Level 3 JSON
// methods, navigator.credentials) for @supabase/auth-js's one-call flows — registerPasskey(),
// signInWithPasskey(), mfa.webauthn.register/authenticate() — to run in Node with the software
// authenticator behind navigator.credentials. Installed only for the duration of one call, so the
// clients are built (and initialised) as in any server-side test.
import type { SoftwareAuthenticator } from './authenticator.js';

class FakePublicKeyCredential {
  readonly id: string;
  readonly type = 'public-key';
  constructor(private readonly json: { id: string }) {
    this.id = json.id;
  }
  // WebAuthn Level 3: options arrive as JSON and credentials leave as JSON, so the authenticator's
  // JSON passes through auth-js unchanged.
  static parseCreationOptionsFromJSON<T>(options: T): T {
    return options;
  }
  static parseRequestOptionsFromJSON<T>(options: T): T {
    return options;
  }
  toJSON() {
    return this.json;
  }
  getClientExtensionResults() {
    return {};
  }
}

const NAMES = ['window', 'document', 'navigator', 'PublicKeyCredential'] as const;

export async function withBrowserWebAuthn<T>(authenticator: SoftwareAuthenticator, run: () => Promise<T>): Promise<T> {
  const g = globalThis as Record<string, unknown>;
  const saved = NAMES.map((name) => [name, Object.getOwnPropertyDescriptor(g, name)] as const);
  const credentials = {
    create: ({ publicKey }: { publicKey: any }) =>
      Promise.resolve().then(() => new FakePublicKeyCredential(authenticator.create(publicKey))),
    get: ({ publicKey }: { publicKey: any }) => Promise.resolve().then(() => new FakePublicKeyCredential(authenticator.get(publicKey))),
  };
  const origin = new URL(authenticator.origin);
  const define = (name: string, value: unknown) => Object.defineProperty(g, name, { value, configurable: true, writable: true });
  define('PublicKeyCredential', FakePublicKeyCredential);
  define('window', { PublicKeyCredential: FakePublicKeyCredential, location: { hostname: origin.hostname, origin: origin.origin } });
  define('document', {});
  define('navigator', { credentials });
  try {
    return await run();
  } finally {
    for (const [name, descriptor] of saved) {
      if (descriptor) Object.defineProperty(g, name, descriptor);
      else delete g[name];
    }
  }
}
