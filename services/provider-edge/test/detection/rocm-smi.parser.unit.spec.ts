import { describe, expect, it } from 'vitest';
import {
  parseRocmSmiJson,
  parseRocmTopology,
  parseRocmVersion,
} from '../../src/domain/detection/rocm-smi.parser';
import { fixture } from '../support/fixtures';

describe('parseRocmSmiJson on outputs reconstructed from the documentation (not recorded)', () => {
  it('reads 8 MI250X GCDs with their full HBM, gfx target, ids and driver', () => {
    const { value, problems } = parseRocmSmiJson(fixture('amd', 'mi250x-8gcd.rocm-smi.json'), '6.1.2');
    expect(problems).toEqual([]);
    expect(value).toHaveLength(8);
    expect(value[0]).toEqual({
      index: 0,
      uuid: 'AMD-0x5b5bc0a8e1b3a100',
      vendor: 'amd',
      model: 'AMD Instinct MI250X',
      vramBytes: 68702699520,
      driverVersion: '6.3.6',
      cudaVersion: null,
      computeCapability: null,
      rocmVersion: '6.1.2',
      architecture: 'gfx90a',
      pciBusId: '0000:C1:00.0',
      mig: { enabled: false, devices: [] },
      utilizationPercent: null,
    });
  });

  it('reports the RX 5700 XT with its 8 GB, not the 256 MiB BAR window (NuNet DMS #364)', () => {
    const { value, problems } = parseRocmSmiJson(fixture('amd', 'rx5700xt.rocm-smi.json'));
    expect(problems).toEqual([]);
    expect(value[0]!.vramBytes).toBe(8573157376);
    expect(value[0]!.vramBytes).not.toBe(268435456);
    // Older rocm-smi spells "Card series"; consumer cards have no unique id: the PCI address stands in.
    expect(value[0]).toMatchObject({
      model: 'Navi 10 [Radeon RX 5600 OEM/5600 XT / 5700/5700 XT]',
      uuid: 'AMD-PCI-0000:03:00.0',
      architecture: 'gfx1010',
    });
  });

  it('turns unusable output into problems, never exceptions', () => {
    expect(parseRocmSmiJson(fixture('amd', 'no-devices.rocm-smi.txt')).problems[0]?.message).toMatch(
      /^not JSON/,
    );
    expect(parseRocmSmiJson('[1,2]').problems).toHaveLength(1);
    const broken = parseRocmSmiJson(JSON.stringify({ card0: { 'PCI Bus': '0000:01:00.0' }, card1: 'x' }));
    expect(broken.value).toEqual([]);
    expect(broken.problems.map((p) => p.field)).toEqual(['card0.Card Series', 'card1']);
  });
});

describe('AMD topology and version', () => {
  it('reads xGMI links among the MI250X GCDs', () => {
    const { value, problems } = parseRocmTopology(fixture('amd', 'mi250x-8gcd.topo.json'));
    expect(problems).toEqual([]);
    expect(value).toHaveLength(28);
    expect(value.every((l) => l.kind === 'xgmi' && l.vendor === 'amd')).toBe(true);
  });

  it('reads the ROCm version file', () => {
    expect(parseRocmVersion(fixture('amd', 'rocm-version.txt'))).toBe('6.1.2');
    expect(parseRocmVersion('garbage')).toBeNull();
  });
});
