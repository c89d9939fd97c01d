// The embedded server's TCP port: the one used last time when it is still free (so a developer's psql
// command keeps working across restarts), otherwise any free loopback port.
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';

export async function chooseLocalPort(portFile: string): Promise<number> {
  const previous = readPort(portFile);
  if (previous !== undefined && (await canListen(previous))) return previous;
  const port = await anyFreePort();
  writeFileSync(portFile, `${port}\n`);
  return port;
}

function readPort(portFile: string): number | undefined {
  try {
    const port = Number.parseInt(readFileSync(portFile, 'utf8'), 10);
    return port > 0 && port < 65536 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** Whether 127.0.0.1:port can be listened on now (the probe closes again at once). */
export function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A loopback port the kernel picks as free (from its ephemeral range). */
export function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
