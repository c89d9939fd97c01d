// The one table of what is deprecated: settings and endpoints that still work, each with the release that
// removes it and what to use instead (README: Versioning). A deprecated setting in use is logged once at
// start; a deprecated endpoint, at its first use in each HTTP thread. The notice stays for at least two
// releases, as the versioning policy promises.
import type { Logger } from 'pino';
import type { Config } from './config/types.js';

export interface Deprecation {
  /** a setting's name (as in docs/settings.md) or an endpoint (`GET /authorize?provider=slack`) */
  name: string;
  kind: 'setting' | 'endpoint';
  /** the release that removes it */
  removedIn: string;
  /** what to do instead */
  instead: string;
  /** settings: whether this configuration uses it */
  inUse?: (config: Config) => boolean;
}

const given = (name: string) => (config: Config) => name in config.sources;
const enabled = (provider: keyof Config['external']['providers']) => (config: Config) =>
  config.external.providers[provider]?.enabled === true;

export const DEPRECATIONS: readonly Deprecation[] = [
  {
    name: 'JWT_ADMIN_GROUP_NAME',
    kind: 'setting',
    removedIn: '1.0.0',
    instead: "not supported by the original either; admin access is JWT_ADMIN_ROLES (a token's role claim)",
    inUse: given('JWT_ADMIN_GROUP_NAME'),
  },
  {
    name: 'JWT_DEFAULT_GROUP_NAME',
    kind: 'setting',
    removedIn: '1.0.0',
    instead:
      "not supported by the original either (it logs the same notice); until then new users' role, empty when unset as in the original",
    inUse: given('JWT_DEFAULT_GROUP_NAME'),
  },
  {
    name: 'OPERATOR_TOKEN',
    kind: 'setting',
    removedIn: '1.0.0',
    instead: 'none: it belongs to the multi-instance mode, which is not supported, and has no effect',
    inUse: given('OPERATOR_TOKEN'),
  },
  {
    name: 'API_ENDPOINT',
    kind: 'setting',
    removedIn: '1.0.0',
    instead: 'none: it belongs to the multi-instance mode, which is not supported, and has no effect',
    inUse: given('API_ENDPOINT'),
  },
  {
    name: 'EXTERNAL_SLACK_ENABLED',
    kind: 'setting',
    removedIn: '1.0.0',
    instead: 'the slack_oidc provider (EXTERNAL_SLACK_OIDC_*): Slack retired the legacy Sign in with Slack',
    inUse: enabled('slack'),
  },
  {
    name: 'EXTERNAL_LINKEDIN_ENABLED',
    kind: 'setting',
    removedIn: '1.0.0',
    instead: 'the linkedin_oidc provider (EXTERNAL_LINKEDIN_OIDC_*): LinkedIn retired its legacy sign-in',
    inUse: enabled('linkedin'),
  },
  {
    name: 'EXPERIMENTAL_PROVIDERS_WITH_OWN_LINKING_DOMAIN',
    kind: 'setting',
    removedIn: '1.0.0',
    instead: 'EXPERIMENTAL_PROVIDER_LINKING_DOMAINS with <provider>=<provider> for each provider; the original deprecates it too',
    inUse: given('EXPERIMENTAL_PROVIDERS_WITH_OWN_LINKING_DOMAIN'),
  },
  { name: 'GET /authorize?provider=slack', kind: 'endpoint', removedIn: '1.0.0', instead: 'provider=slack_oidc' },
  { name: 'GET /authorize?provider=linkedin', kind: 'endpoint', removedIn: '1.0.0', instead: 'provider=linkedin_oidc' },
];

function notice(d: Deprecation): Record<string, string> {
  return { deprecated: d.name, removed_in: d.removedIn, instead: d.instead };
}

/** At start: one warning for each deprecated setting this configuration uses. Returns their names. */
export function logDeprecatedSettings(config: Config, log: Logger): string[] {
  const used = DEPRECATIONS.filter((d) => d.kind === 'setting' && d.inUse?.(config));
  for (const d of used) log.warn(notice(d), `DEPRECATION NOTICE: ${d.name} is deprecated and will be removed in ${d.removedIn}`);
  return used.map((d) => d.name);
}

const noted = new Set<string>();

/** At an endpoint's first use in this thread: one warning. Unknown names are a programming error. */
export function noteDeprecatedEndpoint(name: string, log: Logger): void {
  if (noted.has(name)) return;
  const d = DEPRECATIONS.find((x) => x.kind === 'endpoint' && x.name === name);
  if (!d) throw new TypeError(`${name} is not in the deprecations table`);
  noted.add(name);
  log.warn(notice(d), `DEPRECATION NOTICE: ${d.name} is deprecated and will be removed in ${d.removedIn}`);
}
