// `portcullis keys generate` and `portcullis token` (docs/tokens-and-sessions.md#rotating-signing-keys):
// a new JWT_KEYS value, and the anon / service_role keys signed with the configured signing key.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { GENERATABLE, generateJwk } from './auth/keys.js';
import { createJwtService } from './auth/jwt.js';
import { parseSeconds } from './config/duration.js';
import { loadOrCreateJwtSecret } from '../db/embedded/server.js';
import type { Config } from './config/types.js';

export const KEYS_USAGE = `usage: portcullis keys generate [--alg ${GENERATABLE.join('|')}]`;
export const TOKEN_USAGE = 'usage: portcullis token --role service_role|anon [--exp 10y]';

/** Prints a key set of one new signing key; 2 on bad arguments. */
export function keysCommand(args: string[]): number {
  const parsed = parse(args, { alg: { type: 'string', default: 'ES256' } });
  if (!parsed || parsed.positionals.join(' ') !== 'generate' || !(GENERATABLE as readonly string[]).includes(String(parsed.values.alg))) {
    console.error(KEYS_USAGE);
    return 2;
  }
  console.log(JSON.stringify([generateJwk(String(parsed.values.alg))]));
  return 0;
}

/** Prints an API key for a role, signed as access tokens are; 2 on bad arguments. */
export async function tokenCommand(config: Config, args: string[]): Promise<number> {
  const parsed = parse(args, { role: { type: 'string' }, exp: { type: 'string', default: '10y' } });
  const role = parsed?.values.role;
  const lifetime = lifetimeSeconds(String(parsed?.values.exp));
  if (!parsed || parsed.positionals.length > 0 || (role !== 'anon' && role !== 'service_role') || lifetime === null) {
    console.error(TOKEN_USAGE);
    return 2;
  }
  // The development setup keeps its generated secret in DATA_DIR, as `serve` reads it.
  const secret = config.jwt.secret || (config.jwt.keys.length ? '' : loadOrCreateJwtSecret(config.dataDir));
  const jwt = createJwtService({ ...config.jwt, secret });
  const iat = Math.floor(Date.now() / 1000);
  console.log(await jwt.sign({ ...(config.jwt.issuer ? { iss: config.jwt.issuer } : {}), role, iat, exp: iat + lifetime }));
  return 0;
}

type Options = NonNullable<ParseArgsConfig['options']>;

function parse(args: string[], options: Options) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch {
    return null;
  }
}

/** A token lifetime: whole days (`30d`) or years (`10y`, 365 days each), or a duration setting's syntax. */
function lifetimeSeconds(text: string): number | null {
  const match = /^(\d+)([dy])$/.exec(text);
  if (match) return Number(match[1]) * (match[2] === 'd' ? 86_400 : 365 * 86_400);
  const seconds = parseSeconds(text);
  return seconds !== null && seconds > 0 ? Math.floor(seconds) : null;
}
