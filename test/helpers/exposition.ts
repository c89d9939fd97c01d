// Reads a Prometheus text exposition for tests: a service's scrape, its samples, and the naming rules
// promtool enforces.

/** The service's metrics as Prometheus scrapes them (METRICS_EXPORTER=prometheus). */
export async function scrapeMetrics(metricsPort: number | null): Promise<string> {
  if (metricsPort === null) throw new Error('the service has no metrics port (METRICS_ENABLED)');
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (res.status !== 200) throw new Error(`scrape: ${res.status}`);
  return res.text();
}

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function samples(text: string): Sample[] {
  const found: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    found.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return found;
}

/** The sum of a metric's samples whose labels include `labels` (0 when there is none). */
export function total(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] };

/**
 * What breaks Prometheus' naming rules (as `promtool check metrics` reports them): a family without
 * HELP or TYPE, declared twice, a counter not ending in _total or anything else ending in it, a sample
 * of no declared family, the same series twice.
 */
export function namingProblems(text: string): string[] {
  const problems: string[] = [];
  const types = new Map<string, string>();
  const helps = new Set<string>();
  for (const line of text.split('\n')) {
    const help = /^# HELP (\S+) /.exec(line);
    if (help) {
      if (helps.has(help[1])) problems.push(`${help[1]}: HELP twice`);
      helps.add(help[1]);
    }
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (!type) continue;
    const [, name, kind] = type;
    if (types.has(name)) problems.push(`${name}: TYPE twice`);
    types.set(name, kind);
    if (kind === 'counter' && !name.endsWith('_total')) problems.push(`${name}: a counter without _total`);
    if (kind !== 'counter' && name.endsWith('_total')) problems.push(`${name}: a ${kind} ending in _total`);
    if (!helps.has(name)) problems.push(`${name}: no HELP`);
  }
  const series = new Set<string>();
  for (const s of samples(text)) {
    const family = types.has(s.name)
      ? s.name
      : (SUFFIXES[types.get(s.name.replace(/_(bucket|sum|count)$/, '')) ?? ''] ?? []).some((x) => s.name.endsWith(x))
        ? s.name.replace(/_(bucket|sum|count)$/, '')
        : undefined;
    if (!family) problems.push(`${s.name}: a sample of no declared family`);
    const key = `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`;
    if (series.has(key)) problems.push(`${key}: the same series twice`);
    series.add(key);
  }
  return problems;
}
