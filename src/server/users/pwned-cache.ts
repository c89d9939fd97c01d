// The in-process memory of hashes the range API reported as leaked (docs/passwords.md#the-cache): a Bloom
// filter sized by PASSWORD_HIBP_BLOOM_ITEMS and _FALSE_POSITIVES, one per HTTP thread. It only ever says
// "leaked" (possibly wrongly, at about the configured rate), never "safe": a miss always asks the API.
import type { Config } from '../config/types.js';

export type BloomSettings = Config['password']['hibp']['bloom'];

/**
 * Keys are SHA-1 digests, already uniformly spread, so the filter's bit positions are taken from the
 * digest itself (double hashing over two of its 32-bit words) instead of hashing it again. The words come
 * from the last eight bytes, which lie in the suffix: every key from one answer shares its first 20 bits.
 */
export class PwnedCache {
  private readonly bits: Uint8Array;
  private readonly size: number;
  private readonly probes: number;
  /** keys added since the last clear */
  private added = 0;

  constructor(private readonly settings: BloomSettings) {
    // The textbook optimum for n items at false-positive rate p: m = -n·ln p / (ln 2)², k = (m / n)·ln 2.
    const ln2 = Math.LN2;
    this.size = Math.max(8, Math.ceil((-settings.items * Math.log(settings.falsePositives)) / (ln2 * ln2)));
    this.probes = Math.max(1, Math.round((this.size / settings.items) * ln2));
    this.bits = new Uint8Array(Math.ceil(this.size / 8));
  }

  /** bytes the filter occupies */
  get bytes(): number {
    return this.bits.length;
  }

  /** Remembers the leaked hashes of one answer (20-byte digests). */
  add(digests: Buffer[]): void {
    this.added += digests.length;
    // Past 80 % of the items it was sized for, the real false-positive rate climbs quickly: start afresh.
    if (this.added > 0.8 * this.settings.items) {
      this.bits.fill(0);
      this.added = digests.length;
    }
    for (const digest of digests) this.forEachBit(digest, (index) => (this.bits[index >> 3] |= 1 << (index & 7)));
  }

  /** true: probably leaked (the configured false-positive rate); false: not known here. */
  has(digest: Buffer): boolean {
    let all = true;
    this.forEachBit(digest, (index) => {
      if ((this.bits[index >> 3] & (1 << (index & 7))) === 0) all = false;
    });
    return all;
  }

  private forEachBit(digest: Buffer, visit: (index: number) => void): void {
    const h1 = digest.readUInt32BE(12);
    // odd, so the probes of one key never repeat a step of zero
    const h2 = (digest.readUInt32BE(16) | 1) >>> 0;
    for (let i = 0; i < this.probes; i++) visit((h1 + i * h2) % this.size);
  }
}
