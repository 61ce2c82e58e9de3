import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRocmSmiJson } from '../src/domain/detection/rocm-smi.parser';
import { probeContainerGpuSupport, readAmdDevices } from '../src/infra/runtime/docker-host';
import { fixture } from './support/fixtures';

/*
 * readAmdDevices against a file tree laid out like /sys and /dev of an MI250X host (the inventory is
 * the rocm-smi fixture reconstructed from the documentation). Files, not device nodes: the mapping only lists and stats.
 */
describe('readAmdDevices on an MI250X-shaped /sys and /dev', () => {
  const gpus = parseRocmSmiJson(fixture('amd', 'mi250x-8gcd.rocm-smi.json')).value;
  let root: string;
  const renderGid = 109;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpunet-amd-'));
    await mkdir(join(root, 'dev/dri'), { recursive: true });
    await writeFile(join(root, 'dev/kfd'), '');
    await chmod(join(root, 'dev/kfd'), 0o666);
    // GCD 3 has no render node (a display-only function, say): it must be refused, not guessed.
    for (const [i, gpu] of gpus.entries()) {
      const address = gpu.pciBusId!.toLowerCase();
      const drm = join(root, 'sys/bus/pci/devices', address, 'drm');
      await mkdir(join(drm, `card${i + 1}`), { recursive: true });
      if (i === 3) continue;
      await mkdir(join(drm, `renderD${128 + ((i + 5) % 8)}`));
      const node = join(root, 'dev/dri', `renderD${128 + ((i + 5) % 8)}`);
      await writeFile(node, '');
      await chmod(node, 0o660);
      if (process.getuid?.() === 0) await chown(node, 0, renderGid);
    }
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('maps each GCD to its render node by PCI address, with the node’s group', async () => {
    const { devices, problems } = await readAmdDevices(gpus, root);
    expect(devices.kfd).toEqual({ path: '/dev/kfd', gid: null });
    expect(devices.byUuid.size).toBe(7);
    expect(devices.byUuid.get(gpus[0]!.uuid)).toEqual({
      renderNode: '/dev/dri/renderD133',
      gid: process.getuid?.() === 0 ? renderGid : expect.any(Number),
    });
    expect(devices.byUuid.get(gpus[7]!.uuid)?.renderNode).toBe('/dev/dri/renderD132');
    expect(devices.byUuid.has(gpus[3]!.uuid)).toBe(false);
    expect(problems).toEqual([
      expect.stringMatching(new RegExp(`^${gpus[3]!.uuid}: no single DRM render node`)),
    ]);
  });

  it('a host without /dev/kfd has no AMD devices to give', async () => {
    const bare = await mkdtemp(join(tmpdir(), 'gpunet-amd-bare-'));
    try {
      const { devices, problems } = await readAmdDevices(gpus, bare);
      expect(devices.kfd).toBeNull();
      expect(devices.byUuid.size).toBe(0);
      expect(problems).toContain('/dev/kfd does not exist (amdgpu/ROCm kernel driver not loaded)');
      // And the probe says so too.
      const support = await probeContainerGpuSupport(
        { info: () => Promise.reject(new Error('down')) } as never,
        bare,
      );
      expect(support).toEqual({
        engine: null,
        nvidia: { available: false, detail: 'the Docker engine does not answer' },
        amd: { kfd: false, renderNodes: 0 },
      });
      expect(
        await probeContainerGpuSupport(
          {
            info: () => Promise.resolve({ ServerVersion: '27.0.1', Runtimes: { runc: {}, nvidia: {} } }),
          } as never,
          root,
        ),
      ).toEqual({
        engine: '27.0.1',
        nvidia: { available: true, detail: 'runtime nvidia' },
        amd: { kfd: true, renderNodes: 7 },
      });
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  });

  it('an inventory without AMD GPUs needs nothing', async () => {
    expect(await readAmdDevices([], root)).toEqual({
      devices: { kfd: null, byUuid: new Map() },
      problems: [],
    });
  });
});
