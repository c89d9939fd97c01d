// Sends a list of requests a few at a time, as a client with that many connections would: the answers
// must not depend on the order, and it takes a fraction of the time one after another would.
export async function inFlight<T>(count: number, items: readonly T[], send: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: count }, async () => {
      while (next < items.length) await send(items[next++]);
    }),
  );
}
