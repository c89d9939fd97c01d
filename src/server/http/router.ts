// Matches a request path against the route table. Static paths are a map lookup (the hot path);
// parametrised ones ({name} segments) are tried in table order. Knows which methods a path allows,
// so the HTTP layer can tell 404 from 405. Each route is compiled once (dispatch.ts) into what runs.
// A path under a mount (types.ts Mount) that the table does not serve is the mount's: its feature switch,
// then its own 404 or a 405.
import { compileRoute } from './dispatch.js';
import { apiError } from '../errors.js';
import type { Mount, Route, Run } from './types.js';

export type Match =
  | { kind: 'found'; route: Route; run: Run; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' };

interface Endpoint {
  route: Route;
  run: Run;
}
interface Pattern {
  segments: string[];
  byMethod: Map<string, Endpoint>;
}
/** A mount made runnable: its pseudo-route (named `<prefix>/*` in logs and metrics) and its two refusals. */
interface CompiledMount {
  prefix: string;
  route: Route;
  notFound: Run;
  feature: Mount['feature'];
}

const NO_PARAMS: Record<string, string> = Object.freeze({});

export class Router {
  /** Static paths: the match for each method, built once and shared by every request (never mutated). */
  private readonly exact = new Map<string, Map<string, Match>>();
  private readonly patterns: Pattern[] = [];
  private readonly mounts: CompiledMount[];

  constructor(routes: Route[], mounts: Mount[] = []) {
    this.mounts = mounts.map((mount) => {
      const route: Route = { method: 'GET', path: `${mount.prefix}/*`, guard: 'none', feature: mount.feature, handler: mount.notFound };
      return { prefix: mount.prefix, route, notFound: compileRoute(route), feature: mount.feature };
    });
    for (const route of routes) {
      const run = compileRoute(route);
      if (!route.path.includes('{')) {
        const byMethod = this.exact.get(route.path) ?? new Map<string, Match>();
        byMethod.set(route.method, Object.freeze({ kind: 'found', route, run, params: NO_PARAMS }));
        this.exact.set(route.path, byMethod);
        continue;
      }
      const segments = route.path.split('/');
      let pattern = this.patterns.find((p) => p.segments.join('/') === route.path);
      if (!pattern) this.patterns.push((pattern = { segments, byMethod: new Map() }));
      pattern.byMethod.set(route.method, { route, run });
    }
  }

  match(method: string, path: string): Match {
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const match = this.matchTable(method, trimmed);
    if (match.kind === 'found' || this.mounts.length === 0) return match;
    const mount = this.mounts.find((m) => trimmed === m.prefix || trimmed.startsWith(`${m.prefix}/`));
    if (!mount) return match;
    if (match.kind === 'not_found') return { kind: 'found', route: mount.route, run: mount.notFound, params: NO_PARAMS };
    // The switch first: while the feature is off, a wrong method is its 404 too.
    const allowed = match.allowed;
    const refuse: Run = (_req, ctx) => {
      mount.feature(ctx);
      throw methodNotAllowed(allowed);
    };
    return { kind: 'found', route: mount.route, run: refuse, params: NO_PARAMS };
  }

  private matchTable(method: string, trimmed: string): Match {
    const exact = this.exact.get(trimmed);
    if (exact) {
      const found = exact.get(method) ?? (method === 'HEAD' ? headAsGet(exact.get('GET')) : undefined);
      return found ?? { kind: 'method_not_allowed', allowed: [...exact.keys()] };
    }
    const parts = trimmed.split('/');
    for (const pattern of this.patterns) {
      const params = matchSegments(pattern.segments, parts);
      if (params) return pick(pattern.byMethod, method, params);
    }
    return { kind: 'not_found' };
  }
}

function pick(byMethod: Map<string, Endpoint>, method: string, params: Record<string, string>): Match {
  const found = byMethod.get(method) ?? (method === 'HEAD' ? headAsGet(byMethod.get('GET')) : undefined);
  return found ? { kind: 'found', ...found, params } : { kind: 'method_not_allowed', allowed: [...byMethod.keys()] };
}

/** HEAD stands for a GET that only reads; a GET that changes state is not run for it (types.ts changesState). */
function headAsGet<T extends { route: Route } | Match>(get: T | undefined): T | undefined {
  if (!get) return undefined;
  return 'route' in get && get.route.changesState ? undefined : get;
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i];
    if (want.startsWith('{')) {
      if (!parts[i]) return null;
      try {
        params[want.slice(1, -1)] = decodeURIComponent(parts[i]);
      } catch {
        return null;
      }
    } else if (want !== parts[i]) return null;
  }
  return params;
}

/** 405 with the methods the path does serve in Allow (RFC 9110 section 15.5.6), as the original's router sends it. */
export function methodNotAllowed(allowed: string[]) {
  return apiError('method_not_allowed').withHeader('Allow', allowed.join(', '));
}
