// Reading a provider's user API with the access token as a bearer credential (RFC 6750), through the
// runtime's bounded fetch. Some APIs answer a JSON array (gitlab's emails), which jsonObject refuses.
import { jsonArray, jsonObject } from './outbound.js';
import type { ProviderRuntime } from './types.js';

function bearer(accessToken: string, extra: Record<string, string>): Record<string, string> {
  return { Accept: 'application/json', Authorization: `Bearer ${accessToken}`, ...extra };
}

export async function getUserJson(
  rt: ProviderRuntime,
  url: string,
  accessToken: string,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  return jsonObject(await rt.fetch(url, { headers: bearer(accessToken, headers) }));
}

export async function getUserJsonArray(rt: ProviderRuntime, url: string, accessToken: string): Promise<unknown[]> {
  return jsonArray(await rt.fetch(url, { headers: bearer(accessToken, {}) }));
}
