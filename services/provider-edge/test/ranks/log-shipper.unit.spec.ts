import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type LogChunkOut, LogShipper } from '../../src/app/log-shipper';
import { LineSplitter } from '../../src/infra/runtime/line-splitter';

describe('LineSplitter', () => {
  const split = (chunks: (string | Buffer)[], max?: number) => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l), max);
    for (const c of chunks) s.push(c);
    s.end();
    return lines;
  };

  it('splits on \\n and \\r\\n, keeps a last line without newline', () => {
    expect(split(['a\nb\r\n', 'c'])).toEqual(['a', 'b', 'c']);
    expect(split(['', '\n\n'])).toEqual(['', '']);
  });

  it('decodes UTF-8 split across chunks', () => {
    const bytes = Buffer.from('€uro\n');
    expect(split([bytes.subarray(0, 1), bytes.subarray(1)])).toEqual(['€uro']);
  });

  it('cuts a line longer than the bound, never holding more than one piece', () => {
    expect(split(['abcdefg', 'hij\n'], 4)).toEqual(['abcd', 'efgh', 'ij']);
  });
});

describe('LogShipper: bounded, never blocking', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('batches by line count and by delay', () => {
    const sent: LogChunkOut[] = [];
    const s = new LogShipper((c) => (sent.push(c), true), { maxLines: 3, maxDelayMs: 100 });
    for (const l of ['1', '2', '3', '4']) s.push(l);
    expect(sent).toEqual([{ seq: 1, lines: ['1', '2', '3'], dropped: 0 }]);
    vi.advanceTimersByTime(100);
    expect(sent[1]).toEqual({ seq: 2, lines: ['4'], dropped: 0 });
  });

  it('drops and counts what does not fit the buffer, and says so in the next chunk', () => {
    const sent: LogChunkOut[] = [];
    const s = new LogShipper((c) => (sent.push(c), true), { maxLines: 100, maxBufferedLines: 2 });
    for (const l of ['a', 'b', 'c', 'd']) s.push(l);
    expect(s.droppedPending).toBe(2);
    s.flush();
    expect(sent).toEqual([{ seq: 1, lines: ['a', 'b'], dropped: 2 }]);
  });

  it('counts the lines of a chunk it could not send as dropped (link down), without retrying them', () => {
    let up = false;
    const sent: LogChunkOut[] = [];
    const s = new LogShipper((c) => (up ? (sent.push(c), true) : false), { maxLines: 2 });
    s.push('a');
    s.push('b');
    up = true;
    s.push('c');
    s.close();
    expect(sent).toEqual([{ seq: 1, lines: ['c'], dropped: 2 }]);
  });

  it('keeps chunks under the byte bound', () => {
    const sent: LogChunkOut[] = [];
    const s = new LogShipper((c) => (sent.push(c), true), { maxLines: 100, maxChunkBytes: 10 });
    s.push('x'.repeat(6));
    s.push('y'.repeat(6));
    s.close();
    expect(sent.map((c) => c.lines)).toEqual([['x'.repeat(6)], ['y'.repeat(6)]]);
  });
});
