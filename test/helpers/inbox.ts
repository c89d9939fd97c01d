// A list of captured items (mails, SMS) that tests wait on. Waiting is event-driven: a waiter is
// resolved by the arrival itself, never by polling. Each item is handed to at most one waiter, so a
// test that triggers two sends to the same address gets the two items in order, not the first twice.

export interface Inbox<T> {
  readonly items: T[];
  add(item: T): void;
  /** The oldest item not yet taken that matches, now or when it arrives; rejects after timeoutMs. */
  waitFor(match: (item: T) => boolean, timeoutMs: number, what: string): Promise<T>;
}

export function createInbox<T>(describe: (item: T) => string): Inbox<T> {
  const items: T[] = [];
  const taken = new Set<T>();
  const waiters: Array<{ match: (item: T) => boolean; resolve: (item: T) => void }> = [];

  return {
    items,
    add(item) {
      items.push(item);
      const index = waiters.findIndex((w) => w.match(item));
      if (index === -1) return;
      const [waiter] = waiters.splice(index, 1);
      taken.add(item);
      waiter.resolve(item);
    },
    waitFor(match, timeoutMs, what) {
      const ready = items.find((item) => !taken.has(item) && match(item));
      if (ready) {
        taken.add(ready);
        return Promise.resolve(ready);
      }
      return new Promise<T>((resolve, reject) => {
        const waiter = {
          match,
          resolve: (item: T) => {
            clearTimeout(timer);
            resolve(item);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          const seen = items.map(describe).join('; ') || 'nothing';
          reject(new Error(`no ${what} within ${timeoutMs} ms (received: ${seen})`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
  };
}
