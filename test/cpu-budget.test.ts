// The cores the default thread counts are sized for (docs/settings.md#threads): GOMAXPROCS, as the original's
// Go runtime reads it, else the CPUs bounded by a container's CPU limit, read from cgroup files laid out
// here as a container sees them (v2 and v1), since Node's own count ignores that limit.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { cgroupCpuLimit, cpuBudget } from '../dist/server/config/cpu-budget.js';
import { loadConfig } from '../dist/server/config/load.js';

/** A cgroup layout under a fresh folder: `files` by path under the mount, and the process's membership. */
function layout(t: Test, membership: string, files: Record<string, string>) {
  const root = mkdtempSync(join(os.tmpdir(), 'portcullis-cgroup-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  writeFileSync(join(root, 'membership'), membership);
  return { root, membership: join(root, 'membership') };
}

t.test('the CPU limit is read from cgroup v2 and v1 files, the lowest on the way up', async (t) => {
  const nested = layout(t, '0::/kubepods/pod1/ctr\n', {
    'kubepods/pod1/ctr/cpu.max': 'max 100000\n',
    'kubepods/pod1/cpu.max': '150000 100000\n',
    'kubepods/cpu.max': '400000 100000\n',
  });
  t.equal(cgroupCpuLimit(nested), 1.5, "v2: a pod's limit above its container, the lowest counts");
  t.equal(cgroupCpuLimit(layout(t, '0::/\n', { 'cpu.max': '200000 100000' })), 2, "v2 in a container's own namespace: the mount's top");
  t.equal(
    cgroupCpuLimit(layout(t, '0::/docker/abc\n', { 'cpu.max': '50000 100000' })),
    0.5,
    "a path the container's mount does not show: its top is the container's",
  );
  t.equal(
    cgroupCpuLimit(
      layout(t, '4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n', {
        'cpu,cpuacct/cpu.cfs_quota_us': '250000\n',
        'cpu,cpuacct/cpu.cfs_period_us': '100000\n',
      }),
    ),
    2.5,
    'v1: the cpu controller, quota over period',
  );
  t.equal(cgroupCpuLimit(layout(t, '0::/\n', { 'cpu.max': 'max 100000' })), null, 'no limit');
  t.equal(
    cgroupCpuLimit(layout(t, '1:cpu:/\n', { 'cpu/cpu.cfs_quota_us': '-1', 'cpu/cpu.cfs_period_us': '100000' })),
    null,
    'v1 without a quota',
  );
  t.equal(cgroupCpuLimit({ root: '/nonexistent', membership: '/nonexistent/cgroup' }), null, 'no cgroup files at all');
});

t.test('the budget: GOMAXPROCS, else the CPUs within the limit, rounded up', async (t) => {
  const cpus = os.availableParallelism();
  const half = layout(t, '0::/\n', { 'cpu.max': '50000 100000' });
  t.strictSame(cpuBudget('', half), cpus > 1 ? { cores: 1, from: 'cgroup' } : { cores: 1, from: 'cpus' }, 'half a CPU: one core');
  const wide = layout(t, '0::/\n', { 'cpu.max': `${(cpus + 4) * 100000} 100000` });
  t.strictSame(cpuBudget('', wide), { cores: cpus, from: 'cpus' }, 'a limit above the CPUs changes nothing');
  t.strictSame(cpuBudget('6', half), { cores: 6, from: 'GOMAXPROCS' }, 'GOMAXPROCS before both');
  t.strictSame(cpuBudget('0', wide), { cores: cpus, from: 'cpus' }, 'GOMAXPROCS=0 is ignored, as by Go');
});

t.test('GOMAXPROCS sizes the default thread counts; a count given wins', async (t) => {
  const load = (env: Record<string, string>) => loadConfig({ env, envFile: null });
  t.match(load({ GOMAXPROCS: '4' }).workers, { http: 3, crypto: 4 }, 'one core left to the rest, a crypto thread a core');
  t.match(load({ GOMAXPROCS: '1' }).workers, { http: 1, crypto: 2 }, 'at least one HTTP and two crypto threads');
  t.match(load({ GOMAXPROCS: '4', AUTH_HTTP_WORKERS: '2', AUTH_CRYPTO_WORKERS: '3' }).workers, { http: 2, crypto: 3 });
  const ignored = load({ GOMAXPROCS: 'lots' });
  t.match(ignored.warnings, [/^GOMAXPROCS: "lots" is not a positive whole number; ignored, as Go's runtime ignores it$/]);
  t.equal(ignored.workers.crypto, load({}).workers.crypto, 'and the default is as without it');
});
