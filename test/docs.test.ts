// The reference in docs/ cannot drift from the code: every route, setting and error code is documented,
// and nothing documented as a route, setting or error code is missing from the code.
import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { SETTINGS } from '../dist/server/config/settings.js';
import { ROUTES } from '../dist/server/routes.js';
import * as errorsModule from '../dist/server/errors.js';

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
const apiDoc = read('docs/api.md');
const settingsDoc = read('docs/settings.md');
const errorsDoc = read('docs/errors.md');

/** Every `code` span of a page, as written. */
const codeSpans = (doc: string) => new Set([...doc.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]));

/** The error codes the service sends: the wire `code` of every entry of the error table (src/server/errors.ts). */
function definedErrorCodes(): string[] {
  return [...new Set(Object.values(errorsModule.ERRORS).map((entry) => entry.code))];
}

t.test('every route of the table has its section in docs/api.md, and every section a route', async (t) => {
  const documented = new Set([...apiDoc.matchAll(/^### `([A-Z]+) (\/[^`\s]*)`$/gm)].map((m) => `${m[1]} ${m[2]}`));
  const routes = ROUTES.map((r) => `${r.method} ${r.path}`);
  t.ok(routes.length > 20, 'the route table was read');
  for (const route of routes) t.ok(documented.has(route), `docs/api.md has a "### \`${route}\`" section`);
  for (const section of documented) t.ok(routes.includes(section), `docs/api.md documents ${section}, which is in ROUTES`);
});

// A family such as `EXTERNAL_<PROVIDER>_CLIENT_ID` covers a setting when the setting matches it and the part
// standing for the placeholder is itself listed on the page (`github`, `MAGIC_LINK`), so the list of
// members cannot drift either.
const spans = codeSpans(settingsDoc);
const spansLower = new Set([...spans].map((s) => s.toLowerCase()));
const families = [...spans]
  .filter((s) => /^[A-Z0-9_]*<[A-Z_]+>[A-Z0-9_]*$/.test(s) && !/^<[A-Z_]+>$/.test(s))
  .map((pattern) => ({ pattern, regex: new RegExp(`^${pattern.replace(/<[A-Z_]+>/, '([A-Z0-9_]+)')}$`) }));

function coveredByFamily(name: string): { pattern: string; member: string } | null {
  for (const { pattern, regex } of families) {
    const member = regex.exec(name)?.[1];
    if (member && spansLower.has(member.toLowerCase())) return { pattern, member };
  }
  return null;
}

t.test('every setting is named in docs/settings.md, or covered by a documented family', async (t) => {
  t.ok(SETTINGS.length > 100, 'the settings table was read');
  t.ok(families.length >= 7, 'the provider and mail families are documented as patterns');
  t.equal(coveredByFamily('EXTERNAL_EMAIL_MAGIC_LINK_ENABLED'), null, 'a family does not cover a name whose member is not listed');
  t.notOk(spans.has('NOT_A_SETTING'), 'a name that is not on the page is not found');
  for (const { name } of SETTINGS) {
    t.ok(spans.has(name) || coveredByFamily(name), `docs/settings.md documents ${name}`);
  }
  for (const s of SETTINGS.filter((x) => x.unprefixed?.length)) {
    for (const alias of s.unprefixed!) t.ok(spans.has(alias), `docs/settings.md names the unprefixed alias ${alias}`);
  }
});

t.test('every setting row of docs/settings.md is a setting, a family or a family member', async (t) => {
  const names = new Set(SETTINGS.map((s) => s.name));
  const members = new Set(SETTINGS.map((s) => coveredByFamily(s.name)?.member.toUpperCase()).filter(Boolean));
  const rows = [...settingsDoc.matchAll(/^\| `([A-Z][A-Z0-9_<>]*)`/gm)].map((m) => m[1]);
  t.ok(rows.length > 100, 'the setting rows were read');
  for (const row of rows) {
    const family = families.find((f) => f.pattern === row);
    const known = names.has(row) || members.has(row) || (family !== undefined && SETTINGS.some((s) => family.regex.test(s.name)));
    t.ok(known, `docs/settings.md row ${row} exists in SETTINGS`);
  }
});

t.test('every error code is in docs/errors.md, and every documented code is defined', async (t) => {
  const defined = definedErrorCodes();
  t.ok(defined.length >= 20, `error codes were read (${defined.length})`);
  const documented = [...errorsDoc.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((m) => m[1]);
  for (const code of defined) t.ok(documented.includes(code), `docs/errors.md has a row for ${code}`);
  for (const code of documented) t.ok(defined.includes(code), `docs/errors.md row ${code} is a defined error code`);
  t.equal(new Set(documented).size, documented.length, 'each code has one row');
});

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(doc: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of doc.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

// Code comments point into docs/ (issue 12): a renamed heading must not leave them pointing nowhere.
t.test('every docs/ link, in docs/ and in src/ comments, names a page and a heading that exist', async (t) => {
  const pages = readdirSync(new URL('../docs/', import.meta.url)).filter((f) => f.endsWith('.md'));
  const anchors = new Map(pages.map((p) => [p, anchorsOf(read(`docs/${p}`))]));
  t.ok(anchors.get('api.md')!.has('get-well-knownjwksjson'), 'anchors are computed as GitHub does');
  t.notOk(anchors.get('api.md')!.has('no-such-heading'), 'an absent heading has no anchor');
  const links: Array<{ from: string; page: string; anchor: string }> = [];
  for (const page of pages) {
    for (const m of read(`docs/${page}`).matchAll(/\]\(([a-z0-9-]+\.md)?(?:#([^)\s]+))?\)/g)) {
      links.push({ from: `docs/${page}`, page: m[1] ?? page, anchor: m[2] ?? '' });
    }
  }
  const sources = (dir: string): string[] =>
    readdirSync(new URL(`../${dir}/`, import.meta.url), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? sources(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
    );
  for (const file of sources('src')) {
    for (const m of read(file).matchAll(/docs\/([a-z0-9-]+\.md)(?:#([a-z0-9_-]+))?/g))
      links.push({ from: file, page: m[1], anchor: m[2] ?? '' });
  }
  t.ok(links.length > 50, `links were found (${links.length})`);
  for (const { from, page, anchor } of links) {
    const target = anchors.get(page);
    t.ok(target, `${from}: docs/${page} exists`);
    if (target && anchor) t.ok(target.has(anchor), `${from}: docs/${page}#${anchor} is a heading`);
  }
});
