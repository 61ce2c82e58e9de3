import { GpuSchema } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import {
  isUnknownFieldError,
  parseCudaVersion,
  parseNvidiaSmiList,
  parseNvidiaSmiQuery,
  parseNvidiaTopology,
  QUERY_FIELDS,
  QUERY_FIELDS_WITHOUT_COMPUTE_CAP,
} from '../../src/domain/detection/nvidia-smi.parser';
import { fixture } from '../support/fixtures';

const MiB = 1024 * 1024;

describe('parseNvidiaSmiQuery on outputs reconstructed from the documentation (not recorded)', () => {
  it('reads an 8× H100 SXM host by header names, units and all', () => {
    const { value, problems } = parseNvidiaSmiQuery(fixture('nvidia', 'h100-sxm-8x.query.csv'));
    expect(problems).toEqual([]);
    expect(value).toHaveLength(8);
    expect(value.map((g) => g.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const g3 = value[3]!;
    expect(g3).toMatchObject({
      vendor: 'nvidia',
      model: 'NVIDIA H100 80GB HBM3',
      vramBytes: 81559 * MiB,
      driverVersion: '550.54.15',
      computeCapability: { major: 9, minor: 0 },
      pciBusId: '00000000:5D:00.0',
      utilizationPercent: 100,
      mig: { enabled: false, devices: [] },
    });
    expect(new Set(value.map((g) => g.uuid)).size).toBe(8);
    for (const { utilizationPercent: _u, ...gpu } of value)
      expect(GpuSchema.safeParse(gpu).success).toBe(true);
  });

  it('reads a MIG-enabled A100 whose utilization is [N/A]', () => {
    const { value, problems } = parseNvidiaSmiQuery(fixture('nvidia', 'a100-mig.query.csv'));
    expect(problems).toEqual([]);
    expect(value[0]).toMatchObject({
      mig: { enabled: true },
      utilizationPercent: null,
      vramBytes: 81920 * MiB,
    });
    expect(value[1]).toMatchObject({ mig: { enabled: false }, utilizationPercent: 0 });
  });

  it('reads mixed consumer cards with [Not Supported] and [N/A] fields', () => {
    const { value, problems } = parseNvidiaSmiQuery(fixture('nvidia', 'rtx-mixed.query.csv'));
    expect(problems).toEqual([]);
    expect(value.map((g) => [g.model, g.computeCapability, g.utilizationPercent, g.mig.enabled])).toEqual([
      ['NVIDIA GeForce RTX 4090', { major: 8, minor: 9 }, 7, false],
      ['NVIDIA GeForce RTX 3090', { major: 8, minor: 6 }, null, false],
    ]);
  });

  it('reads noheader,nounits output positionally (the L4 of NuNet DMS #1073 is not lost)', () => {
    const { value, problems } = parseNvidiaSmiQuery(fixture('nvidia', 'l4-noheader-nounits.query.csv'));
    expect(problems).toEqual([]);
    expect(value).toHaveLength(1);
    expect(value[0]).toMatchObject({
      model: 'NVIDIA L4',
      vramBytes: 23034 * MiB,
      computeCapability: { major: 8, minor: 9 },
    });
  });

  it('reads an old driver that cannot report compute_cap', () => {
    expect(isUnknownFieldError(fixture('nvidia', 't4-old-driver.compute-cap-error.txt'))).toBe(true);
    const { value, problems } = parseNvidiaSmiQuery(
      fixture('nvidia', 't4-old-driver.query.csv'),
      QUERY_FIELDS_WITHOUT_COMPUTE_CAP,
    );
    expect(problems).toEqual([]);
    expect(value[0]).toMatchObject({
      model: 'Tesla T4',
      computeCapability: null,
      driverVersion: '470.182.03',
    });
  });

  it('reports rows it cannot use instead of dropping them silently', () => {
    const text = [
      'index, uuid, name, memory.total [MiB], driver_version, compute_cap, pci.bus_id, utilization.gpu [%], mig.mode.current',
      '0, GPU-aaaaaaaa-1111-2222-3333-444444444444, NVIDIA A10, 23028 MiB, 535.1, 8.6, 00000000:01:00.0, 0 %, [N/A]',
      '1, [N/A], NVIDIA A10, 23028 MiB, 535.1, 8.6, 00000000:02:00.0, 0 %, [N/A]',
      'x, GPU-bbbbbbbb-1111-2222-3333-444444444444, NVIDIA A10, 23028 MiB, 535.1, 8.6, 00000000:03:00.0, 0 %, [N/A]',
      '3, GPU-aaaaaaaa-1111-2222-3333-444444444444, NVIDIA A10, 23028 MiB, 535.1, 8.6, 00000000:04:00.0, 0 %, [N/A]',
      '4, GPU-cccccccc-1111-2222-3333-444444444444, NVIDIA A10, lots, 535.1, eight, 00000000:05:00.0, 0 %, [N/A]',
      'truncated, row',
    ].join('\n');
    const { value, problems } = parseNvidiaSmiQuery(text);
    expect(value.map((g) => g.index)).toEqual([0, 4]);
    expect(value[1]).toMatchObject({ vramBytes: 0, computeCapability: null });
    expect(problems.map((p) => [p.line, p.field])).toEqual([
      [3, 'uuid'],
      [4, 'index'],
      [5, 'uuid'],
      [6, 'memory.total'],
      [6, 'compute_cap'],
      [7, null],
    ]);
  });

  it('asks for the fields in the documented order', () => {
    expect(QUERY_FIELDS.join(',')).toBe(
      'index,uuid,name,memory.total,driver_version,compute_cap,pci.bus_id,utilization.gpu,mig.mode.current',
    );
  });
});

describe('parseNvidiaTopology', () => {
  it('reads the 8-GPU NVLink matrix, ignoring escapes, NICs, affinities and the legend', () => {
    const { value, problems } = parseNvidiaTopology(fixture('nvidia', 'h100-sxm-8x.topo.txt'));
    expect(problems).toEqual([]);
    expect(value).toHaveLength(28);
    expect(value.every((l) => l.kind === 'nvlink' && l.lanes === 18 && l.vendor === 'nvidia')).toBe(true);
    expect(value[0]).toEqual({ vendor: 'nvidia', a: 0, b: 1, kind: 'nvlink', lanes: 18 });
  });

  it('reads a bridged A100 pair, PCIe-only consumer cards and a single GPU', () => {
    expect(parseNvidiaTopology(fixture('nvidia', 'a100-mig.topo.txt')).value).toEqual([
      { vendor: 'nvidia', a: 0, b: 1, kind: 'nvlink', lanes: 12 },
    ]);
    expect(parseNvidiaTopology(fixture('nvidia', 'rtx-mixed.topo.txt')).value).toEqual([
      { vendor: 'nvidia', a: 0, b: 1, kind: 'sys', lanes: null },
    ]);
    expect(parseNvidiaTopology(fixture('nvidia', 'l4.topo.txt'))).toEqual({ value: [], problems: [] });
  });

  it('reports unknown link types and output without a matrix', () => {
    const odd = '\tGPU0\tGPU1\nGPU0\t X \tWAT\nGPU1\tWAT\t X \n';
    const parsed = parseNvidiaTopology(odd);
    expect(parsed.value).toEqual([{ vendor: 'nvidia', a: 0, b: 1, kind: 'unknown', lanes: null }]);
    expect(parsed.problems[0]?.message).toContain('unknown link type WAT');
    expect(parseNvidiaTopology('No devices were found').problems).toHaveLength(1);
  });
});

describe('nvidia-smi -L and -q', () => {
  it('finds the MIG instances of a GPU in MIG mode', () => {
    const query = parseNvidiaSmiQuery(fixture('nvidia', 'a100-mig.query.csv')).value;
    const { value, problems } = parseNvidiaSmiList(fixture('nvidia', 'a100-mig.list.txt'));
    expect(problems).toEqual([]);
    expect(value.get(query[0]!.uuid)?.map((d) => d.profile)).toEqual(['3g.40gb', '3g.40gb']);
    expect(value.get(query[1]!.uuid)).toEqual([]);
  });

  it('reads the CUDA version from -q and from the banner', () => {
    expect(parseCudaVersion(fixture('nvidia', 'h100-sxm-8x.compute.txt'))).toBe('12.4');
    expect(parseCudaVersion(fixture('nvidia', 't4-old-driver.compute.txt'))).toBe('11.4');
    expect(parseCudaVersion('| NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4 |')).toBe(
      '12.4',
    );
    expect(parseCudaVersion(fixture('nvidia', 'driver-not-loaded.stderr.txt'))).toBeNull();
  });
});
