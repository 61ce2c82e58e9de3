import { expect } from 'vitest';
import {
  type FilterPlugin,
  type GangRequest,
  type GpuInput,
  type HostInput,
  type ProviderInput,
  type ProviderPolicy,
  type Status,
  SUCCESS,
} from '../../src';
import { ctxOf, firstHost, gpu, oneHost } from '../fixtures';

/** One named row of a filter's table: a request, one GPU on one host, and the expected verdict. */
export interface FilterCase {
  readonly name: string;
  readonly request?: Partial<GangRequest>;
  readonly model?: string;
  readonly gpu?: Partial<GpuInput>;
  readonly host?: Partial<HostInput>;
  readonly provider?: Partial<Omit<ProviderInput, 'policy'>> & { policy?: Partial<ProviderPolicy> };
  /** 'Success', or the status code and reason constant expected. */
  readonly expect: 'Success' | readonly [Status['code'], string];
  /** The plugin should have nothing to say (no predicate at all). */
  readonly inactive?: boolean;
}

export const runFilter = (plugin: FilterPlugin, c: FilterCase): Status => {
  const snapshot = oneHost([gpu(c.model ?? 'A100-80G', c.gpu ?? {})], c.provider ?? {}, c.host ?? {});
  const ctx = ctxOf(snapshot, c.request ?? {});
  const { host, provider, gpus } = firstHost(snapshot);
  const hp = plugin.hostFilter?.(ctx) ?? null;
  const gp = plugin.gpuFilter?.(ctx) ?? null;
  if (c.inactive === true) {
    expect(hp).toBeNull();
    expect(gp).toBeNull();
  }
  const hs = hp === null ? SUCCESS : hp(host, provider);
  if (hs.code !== 'Success') return hs;
  return gp === null ? SUCCESS : gp(gpus[0]!, host, provider);
};

export const expectVerdict = (plugin: FilterPlugin, c: FilterCase): void => {
  const st = runFilter(plugin, c);
  if (c.expect === 'Success') expect(st.code, st.message).toBe('Success');
  else {
    expect([st.code, st.reason]).toEqual(c.expect);
    expect(st.plugin).toBe(plugin.name);
    expect(st.message.length).toBeGreaterThan(0);
  }
};
