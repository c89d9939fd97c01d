// LOG_FILE opened at start the way the logger opens it (observability/log.ts: appending, its directories
// created), so a path that takes no log lines stops the start with its name instead of failing the logger:
// the original fails its start only when it cannot open the file, then loses each line it cannot write.
import fs from 'node:fs';
import path from 'node:path';

/**
 * Kernel interfaces that show up as regular files (/proc/self/mem, /proc/1/status, /sys/...) and open for
 * appending, but refuse the lines, or read them as commands: the logger's first flush fails and ends the thread.
 */
const KERNEL_FILESYSTEMS = new Map([
  [0x9fa0, '/proc'],
  [0x62656572, '/sys'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
]);

/** Why the log lines cannot go to `file`, or null (also for none: stdout). */
export function logFileProblem(file: string): string | null {
  if (!file) return null;
  let fd: number;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    // Not blocking: a FIFO nothing reads from would otherwise hold the start for good.
    const { O_WRONLY, O_APPEND, O_CREAT, O_NONBLOCK } = fs.constants;
    fd = fs.openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK, 0o660);
  } catch (err) {
    return `"${file}" cannot be opened for appending log lines (${(err as Error).message})`;
  }
  try {
    const kernel = fs.fstatSync(fd).isFile() ? KERNEL_FILESYSTEMS.get(Number(fs.statfsSync(file).type)) : undefined;
    return kernel
      ? `"${file}" is a file of the kernel's ${kernel}, which takes no log lines; name a regular file, or leave it empty for stdout`
      : null;
  } finally {
    fs.closeSync(fd);
  }
}
