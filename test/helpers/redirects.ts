// The redirect bypass corpus (test/fixtures/redirect-bypass.json) and the one question asked of every
// target it produces: where would a browser go?
import { readFileSync } from 'node:fs';

export const SITE_URL = 'https://app.example.test';
export const URI_ALLOW_LIST = 'https://*.allowed.example.test/**';

export const corpus = JSON.parse(readFileSync(new URL('../fixtures/redirect-bypass.json', import.meta.url), 'utf8')) as {
  refused: string[];
  accepted: Array<[string, string]>;
};

/** https, no userinfo, default port, and the site's host or one label under the allowed domain. */
export function landsSafely(href: string): boolean {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return false;
  }
  return (
    url.protocol === 'https:' &&
    !url.username &&
    !url.password &&
    url.port === '' &&
    (url.hostname === 'app.example.test' || /^[a-z0-9-]+\.allowed\.example\.test$/.test(url.hostname))
  );
}

/** A Location without its fragment: what the redirect target was before the session was added. */
export const withoutFragment = (href: string) => href.split('#')[0];
