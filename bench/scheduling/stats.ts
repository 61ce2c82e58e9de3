/** Small numeric helpers shared by the scheduling benchmark's sections. */

export interface Distribution {
  readonly n: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export const quantile = (sorted: readonly number[], q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export const distribution = (values: readonly number[]): Distribution => {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((s, v) => s + v, 0);
  return {
    n: sorted.length,
    mean: sorted.length === 0 ? NaN : sum / sorted.length,
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1]!,
  };
};

/** Prints rows as an aligned table; the first row is the header. */
export const table = (rows: readonly (readonly (string | number)[])[]): void => {
  const text = rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)));
  const widths = text[0]!.map((_, i) => Math.max(...text.map((r) => (r[i] ?? '').length)));
  for (const [i, r] of text.entries()) {
    console.log(`  ${r.map((c, j) => (j === 0 ? c.padEnd(widths[j]!) : c.padStart(widths[j]!))).join('  ')}`);
    if (i === 0) console.log(`  ${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  }
};

export const fmt = (n: number): string => {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  const a = Math.abs(n);
  return a >= 100 ? n.toFixed(0) : a >= 10 ? n.toFixed(1) : a >= 1 ? n.toFixed(2) : n.toFixed(3);
};

export const peakRssMiB = (): number => process.resourceUsage().maxRSS / 1024;

/** A binary min-heap keyed by `key` (the simulator's completion queue). */
export class MinHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly key: (t: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(t: T): void {
    const a = this.items;
    a.push(t);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.key(a[p]!) <= this.key(a[i]!)) break;
      [a[p], a[i]] = [a[i]!, a[p]!];
      i = p;
    }
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && this.key(a[l]!) < this.key(a[m]!)) m = l;
        if (r < a.length && this.key(a[r]!) < this.key(a[m]!)) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i]!, a[m]!];
        i = m;
      }
    }
    return top;
  }
}
