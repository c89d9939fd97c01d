// Raw HTTP/1.1 over a socket, for tests that must send what no HTTP client would (hostile heads, split
// reads, pipelining, oversized bodies) and read exactly what comes back.
import net from 'node:net';

export interface Exchange {
  received: string;
  /** what ended the exchange: null once `complete` said the answers are there */
  error: string | null;
}

/** Writes `writes` one after another (a pause between them, so each is its own read), collecting the answers. */
export function exchange(
  port: number,
  writes: Buffer[],
  complete: (received: string) => boolean,
  { pauseMs = 20, timeoutMs = 15_000 } = {},
): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let received = '';
    let done = false;
    const finish = (error: string | null) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ received, error });
    };
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (complete(received)) finish(null);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
    socket.on('close', () => finish(complete(received) ? null : 'closed before the answer was complete'));
    socket.setTimeout(timeoutMs, () => finish(`no answer within ${timeoutMs / 1000} s`));
    void (async () => {
      for (const bytes of writes) {
        if (done) return;
        socket.write(bytes);
        await new Promise((r) => setTimeout(r, pauseMs));
      }
    })();
  });
}

/** The answers in what was received, each from its status line on. */
export const answers = (received: string) => received.split(/(?=HTTP\/1\.1 \d{3} )/).filter(Boolean);

/** The answers whose Content-Length bytes of body are all there. */
export function completeAnswers(received: string): string[] {
  return answers(received).filter((answer) => {
    const end = answer.indexOf('\r\n\r\n');
    const length = /\r\ncontent-length: *(\d+)/i.exec(answer.slice(0, end));
    return end >= 0 && length !== null && answer.length - end - 4 >= Number(length[1]);
  });
}

export const statusOf = (answer: string) => Number(answer.slice(9, 12));
export const bodyText = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);
