import type { StoredLink } from './cluster-snapshot';

/**
 * Measured links as a persistent map: a base shared by every snapshot derived from it, plus the
 * pairs measured since. A new measurement copies only those recent pairs, so snapshots that differ
 * by one link do not each hold a copy of a table of hundreds of thousands of pairs. Once the recent
 * pairs outgrow √(base) they are folded into a new base: an update costs O(√links) amortized.
 */
export class LinkTable implements ReadonlyMap<number, StoredLink> {
  private constructor(
    private readonly base: ReadonlyMap<number, StoredLink>,
    private readonly recent: ReadonlyMap<number, StoredLink>,
    readonly size: number,
  ) {}

  /** `current` with `links` set (each replaces its pair's entry); `current` is left alone. */
  static with(
    current: ReadonlyMap<number, StoredLink>,
    links: ReadonlyMap<number, StoredLink>,
  ): ReadonlyMap<number, StoredLink> {
    const base = current instanceof LinkTable ? current.base : current;
    const recent = new Map(current instanceof LinkTable ? current.recent : []);
    let size = current.size;
    for (const [key, link] of links) {
      if (!current.has(key) && !recent.has(key)) size++;
      recent.set(key, link);
    }
    if (recent.size * recent.size <= Math.max(4096, base.size)) return new LinkTable(base, recent, size);
    const folded = new Map(base);
    for (const [key, link] of recent) folded.set(key, link);
    return folded;
  }

  get(key: number): StoredLink | undefined {
    return this.recent.get(key) ?? this.base.get(key);
  }

  has(key: number): boolean {
    return this.recent.has(key) || this.base.has(key);
  }

  *entries(): MapIterator<[number, StoredLink]> {
    for (const [key, link] of this.base) if (!this.recent.has(key)) yield [key, link];
    yield* this.recent;
  }

  *keys(): MapIterator<number> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<StoredLink> {
    for (const [, link] of this.entries()) yield link;
  }

  [Symbol.iterator](): MapIterator<[number, StoredLink]> {
    return this.entries();
  }

  forEach(f: (value: StoredLink, key: number, map: ReadonlyMap<number, StoredLink>) => void): void {
    for (const [key, link] of this.entries()) f(link, key, this);
  }
}
