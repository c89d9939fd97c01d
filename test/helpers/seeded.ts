// Random choices that repeat: the same seed draws the same sequence (xorshift32), so a test that draws
// its requests from a seed replays a failure when run again, and another seed tries other requests.
export interface Seeded {
  /** a number in [0, 1) */
  random: () => number;
  /** one element of a list; undefined only for an empty one */
  pick: <T>(xs: readonly T[]) => T | undefined;
  /** one element of a list that must not be empty */
  one: <T>(xs: readonly T[]) => T;
}

export function seeded(seed: number): Seeded {
  let state = seed >>> 0 || 1;
  const random = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
  const pick = <T>(xs: readonly T[]): T | undefined => xs[Math.floor(random() * xs.length)];
  const one = <T>(xs: readonly T[]): T => {
    if (xs.length === 0) throw new Error('seeded.one: an empty list');
    return xs[Math.floor(random() * xs.length)];
  };
  return { random, pick, one };
}
