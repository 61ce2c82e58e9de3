import { validate, version } from 'uuid';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventIdSchema, newEventId } from '../src';

/** The Unix milliseconds an id carries (its first 48 bits). */
const msOf = (id: string): number => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('newEventId', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('makes UUIDv7s (the uuid package agrees), unique and strictly increasing as strings', () => {
    const ids = Array.from({ length: 20_000 }, () => newEventId());
    for (const id of ids) {
      expect(validate(id) && version(id) === 7, id).toBe(true);
      expect(EventIdSchema.safeParse(id).success, id).toBe(true);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++)
      expect(ids[i]! > ids[i - 1]!, `${ids[i - 1]} < ${ids[i]}`).toBe(true);
  });

  it('carries the clock in milliseconds', () => {
    const ms = Date.UTC(2031, 0, 2, 3, 4, 5, 678);
    vi.spyOn(Date, 'now').mockReturnValue(ms);
    const id = newEventId();
    expect(msOf(id)).toBe(ms);
    expect(id.replaceAll('-', '').slice(0, 12)).toBe(ms.toString(16).padStart(12, '0'));
  });

  it('stays increasing when the clock steps back: the last millisecond is kept until the clock passes it', () => {
    const now = vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2032, 5, 1));
    const before = newEventId();
    now.mockReturnValue(Date.UTC(2032, 5, 1) - 5_000);
    const during = Array.from({ length: 100 }, () => newEventId());
    now.mockReturnValue(Date.UTC(2032, 5, 1) + 1);
    const after = newEventId();
    const all = [before, ...during, after];
    for (let i = 1; i < all.length; i++) expect(all[i]! > all[i - 1]!).toBe(true);
    expect(during.every((id) => msOf(id) === Date.UTC(2032, 5, 1))).toBe(true);
    expect(msOf(after)).toBe(Date.UTC(2032, 5, 1) + 1);
  });

  it('the bits after the counter are random: no two ids of one millisecond share them', () => {
    vi.spyOn(Date, 'now').mockReturnValue(Date.UTC(2033, 0, 1));
    const tails = Array.from({ length: 5_000 }, () => newEventId().slice(24));
    expect(new Set(tails).size).toBe(tails.length);
  });
});
