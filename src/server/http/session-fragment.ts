// The session a browser redirect hands over travels after a `#` appended to the target as it stands, as the
// original's AsRedirectURL does: a target that already has a fragment keeps it (`…/#/` becomes
// `…/#/#access_token=…`), which hash-routed apps (Flutter web, Vue or Angular hash mode) need to land on
// their route. The parameters are written by url.Values.Encode (sorted, url.QueryEscape), as there. Error and
// message redirects replace the fragment instead, as the original's do.
import { goValuesEncode } from './go-url.js';

/** `target` with `params` appended after a `#`, the target's own fragment left in place. */
export const withSessionFragment = (target: string, params: Record<string, string>): string => `${target}#${goValuesEncode(params)}`;
