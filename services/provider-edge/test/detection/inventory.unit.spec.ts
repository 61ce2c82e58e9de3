import { InventorySchema } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import type { BackendResult } from '../../src/domain/detection/detection.types';
import { directPeers, mergeInventory } from '../../src/domain/detection/inventory';
import { parseNvidiaSmiQuery, parseNvidiaTopology } from '../../src/domain/detection/nvidia-smi.parser';
import { parseRocmSmiJson } from '../../src/domain/detection/rocm-smi.parser';
import { parseSimulatedInventory } from '../../src/domain/detection/simulated-inventory';
import { fixture } from '../support/fixtures';

const nvidia: BackendResult = {
  name: 'nvidia',
  status: 'ok',
  detail: null,
  gpus: parseNvidiaSmiQuery(fixture('nvidia', 'rtx-mixed.query.csv')).value,
  links: parseNvidiaTopology(fixture('nvidia', 'rtx-mixed.topo.txt')).value,
  problems: [],
};
const amd: BackendResult = {
  name: 'amd',
  status: 'ok',
  detail: null,
  gpus: parseRocmSmiJson(fixture('amd', 'rx5700xt.rocm-smi.json')).value,
  links: [],
  problems: [],
};

describe('mergeInventory', () => {
  it('reports NVIDIA and AMD GPUs of a mixed host together', () => {
    const inventory = mergeInventory([nvidia, amd]);
    expect(InventorySchema.parse(inventory)).toEqual(inventory);
    expect(inventory.simulated).toBe(false);
    expect(inventory.gpus.map((g) => `${g.vendor}:${g.index}`)).toEqual(['amd:0', 'nvidia:0', 'nvidia:1']);
    expect(inventory.gpus.some((g) => 'utilizationPercent' in g)).toBe(false);
  });

  it('keeps AMD GPUs when the NVIDIA backend fails, and the other way round', () => {
    const failed: BackendResult = {
      ...nvidia,
      status: 'failed',
      detail: 'NVIDIA-SMI has failed',
      gpus: [],
      links: [],
    };
    const inventory = mergeInventory([failed, amd]);
    expect(inventory.gpus.map((g) => g.vendor)).toEqual(['amd']);
    expect(inventory.backends).toEqual([
      { name: 'nvidia', status: 'failed', detail: 'NVIDIA-SMI has failed' },
      { name: 'amd', status: 'ok', detail: null },
    ]);
    const absent: BackendResult = { ...amd, status: 'absent', detail: 'rocm-smi not found', gpus: [] };
    expect(mergeInventory([nvidia, absent]).gpus).toHaveLength(2);
  });

  it('labels a declared inventory simulated and never mixes it with detected GPUs', () => {
    const sim = parseSimulatedInventory(fixture('simulated', 'h100-node.inventory.yaml'));
    if (!sim.ok) throw new Error(JSON.stringify(sim.issues));
    const inventory = mergeInventory([nvidia, sim.value.backend]);
    expect(inventory.simulated).toBe(true);
    expect(inventory.gpus).toHaveLength(8);
    expect(inventory.gpus.every((g) => g.uuid.startsWith('SIM-'))).toBe(true);
    expect(inventory.links).toHaveLength(28);
    expect(directPeers(inventory, { vendor: 'nvidia', index: 3 })).toEqual([0, 1, 2, 4, 5, 6, 7]);
    expect(sim.value.host).toEqual({ logicalCores: 224, memoryBytes: 2 * 1024 ** 4, diskFreeBytes: 10e12 });
  });
});

describe('parseSimulatedInventory', () => {
  it('numbers GPUs per vendor and infers the vendor from the model', () => {
    const sim = parseSimulatedInventory(fixture('simulated', 'mixed.inventory.yaml'));
    if (!sim.ok) throw new Error(JSON.stringify(sim.issues));
    expect(sim.value.backend.gpus.map((g) => [g.uuid, g.vendor, g.vramBytes, g.architecture])).toEqual([
      ['SIM-nvidia-0', 'nvidia', 24 * 1024 ** 3, null],
      ['SIM-amd-0', 'amd', 64 * 1024 ** 3, 'gfx90a'],
      ['SIM-amd-1', 'amd', 64 * 1024 ** 3, 'gfx90a'],
    ]);
    expect(sim.value.backend.links).toEqual([{ vendor: 'amd', a: 0, b: 1, kind: 'xgmi', lanes: null }]);
  });

  it('prefixes the ids as the file says, so that simulated hosts of one cluster never collide', () => {
    const sim = parseSimulatedInventory('uuid_prefix: SIM-alpha\ngpus: [{ model: X, vram: 8GiB, count: 2 }]');
    if (!sim.ok) throw new Error(JSON.stringify(sim.issues));
    expect(sim.value.backend.gpus.map((g) => g.uuid)).toEqual(['SIM-alpha-nvidia-0', 'SIM-alpha-nvidia-1']);
  });

  it.each([
    [
      'a prefix that does not say simulated',
      'uuid_prefix: GPU-1234\ngpus: [{ model: X, vram: 8GiB }]',
      'uuid_prefix',
    ],
    ['no GPUs', 'gpus: []', 'gpus'],
    ['a bad size', 'gpus: [{ model: X, vram: 80 gigs }]', 'gpus[0].vram'],
    ['an unknown key', 'gpus: [{ model: X, vram: 8GiB, colour: red }]', 'gpus[0]'],
    [
      'a bad compute capability',
      'gpus: [{ model: X, vram: 8GiB, compute_capability: "nine" }]',
      'gpus[0].compute_capability',
    ],
    [
      'NVLink on AMD',
      'gpus: [{ model: AMD Instinct MI300X, vram: 192GiB, interconnect: nvlink }]',
      'gpus[0]',
    ],
    [
      'too many GPUs',
      'gpus: [{ model: X, vram: 8GiB, count: 60 }, { model: Y, vram: 8GiB, count: 10 }]',
      'gpus',
    ],
    ['a bad host memory', 'gpus: [{ model: X, vram: 8GiB }]\nhost: { memory: lots }', 'host.memory'],
    ['not YAML', 'gpus: [', ''],
  ])('rejects %s with its field path', (_name, text, path) => {
    const r = parseSimulatedInventory(text);
    expect(r.ok).toBe(false);
    expect(r.ok ? [] : r.issues.map((i) => i.path)).toContain(path);
  });
});
