// Where a hook is sent: an HTTP(S) endpoint or a Postgres function, parsed from HOOK_<NAME>_URI with the
// original's rules (docs/hooks.md#uris-and-secrets). Checked once at start-up, so a request never meets a bad URI.

export type HookTarget =
  | {
      kind: 'http';
      /** the URI without user info, which fetch refuses to carry */
      url: string;
      secrets: string[];
      /** `Basic …` from the URI's user info, sent as Go's HTTP client sends it; undefined without one */
      authorization?: string;
    }
  | {
      kind: 'pg';
      /**
       * `"schema"."function"`: each part a checked identifier, quoted as the original quotes them, so a
       * function named in mixed case is found by its own name
       */
      qualifiedName: string;
    };

/** A Postgres identifier the original accepts in a pg-functions URI (unquoted, up to 63 characters). */
const IDENTIFIER = /^[a-zA-Z_][a-zA-Z0-9_]{0,62}$/;
/**
 * Standard Webhooks symmetric secret, as the original checks it: v1,whsec_ and at least 32 base64 characters
 * (its pattern bounds the first 88 and not what follows, so longer secrets pass there too).
 */
const SYMMETRIC_SECRET = /^v1,whsec_[A-Za-z0-9+/=]{32,88}/;
/** Plain http is for a hook on the same machine only, as the original allows. */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', 'host.docker.internal']);

/** Problems with a URI and its secrets, each starting with the setting's suffix (URI: or SECRETS:); [] when fine. */
export function hookTargetProblems(uri: string, secrets: string[]): string[] {
  if (!uri) return [];
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return [`URI: "${uri}" is not a URI`];
  }
  switch (parsed.protocol) {
    case 'pg-functions:': {
      const [, schema, fn] = parsed.pathname.split('/');
      if (!schema || !fn) return [`URI: "${uri}" must name pg-functions://postgres/<schema>/<function>`];
      if (!IDENTIFIER.test(schema)) return [`URI: invalid schema name: ${schema}`];
      if (!IDENTIFIER.test(fn)) return [`URI: invalid function name: ${fn}`];
      return [];
    }
    case 'http:':
      if (!LOCAL_HOSTS.has(parsed.hostname)) return ['URI: only localhost, 127.0.0.1 and ::1 are supported with http (use https)'];
      return [...userInfoProblems(parsed), ...secretProblems(secrets)];
    case 'https:':
      return [...userInfoProblems(parsed), ...secretProblems(secrets)];
    default:
      return ['URI: only pg-functions:// (Postgres functions) and https:// endpoints are supported'];
  }
}

/**
 * User info that hookTarget cannot decode into Basic credentials (a '%' not starting an escape) would fail
 * every call with a 500; the original's URL parser refuses it at start-up. The credentials are not repeated.
 */
function userInfoProblems(parsed: URL): string[] {
  try {
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
    return [];
  } catch {
    return ["URI: its user info holds a '%' that starts no escape (write a '%' as %25)"];
  }
}

function secretProblems(secrets: string[]): string[] {
  // The original accepts asymmetric v1a secrets in its configuration but fails every call signed with one.
  const bad = secrets.filter((s) => !SYMMETRIC_SECRET.test(s));
  return bad.length ? [`SECRETS: ${bad.length} secret(s) not of the form v1,whsec_<base64> (separate several with |)`] : [];
}

/** The target of a URI already checked by hookTargetProblems. */
export function hookTarget(uri: string, secrets: string[]): HookTarget {
  const parsed = new URL(uri);
  if (parsed.protocol === 'pg-functions:') {
    const [, schema, fn] = parsed.pathname.split('/');
    // Safe to quote as they are: hookTargetProblems allowed letters, digits and underscores only.
    return { kind: 'pg', qualifiedName: `"${schema}"."${fn}"` };
  }
  if (!parsed.username && !parsed.password) return { kind: 'http', url: uri, secrets };
  // https://user:pass@host/hook: Go's client sends the user info as Basic credentials; fetch refuses such a URL.
  const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { kind: 'http', url: parsed.href, secrets, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}
