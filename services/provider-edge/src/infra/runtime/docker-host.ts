/*
 * What the host offers the docker runtime: the NVIDIA container toolkit (for device requests), the
 * AMD device files (/dev/kfd, one DRM render node per GPU, found by PCI address in sysfs), and the
 * engine itself. The edge reports it with its inventory so that the scheduler never places a GPU
 * job on a host whose engine cannot hand the GPUs to a container.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type Docker from 'dockerode';
import type { AmdDevice, AmdDevices } from './docker-sandbox';

/** A GPU as the inventory has it (detection's `DetectedGpu` satisfies it). */
export interface InventoryGpu {
  readonly uuid: string;
  readonly vendor: 'nvidia' | 'amd';
  readonly pciBusId: string | null;
}

/**
 * A PCI address in sysfs spelling: `0000:c1:00.0`. Accepts rocm-smi's `0000:C1:00.0` and
 * nvidia-smi's 8-digit domain `00000000:18:00.0`; null for anything else.
 */
export const sysfsPciAddress = (pciBusId: string): string | null => {
  const m = /^([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$/.exec(pciBusId.trim());
  if (!m) return null;
  return `${m[1]!.slice(-4)}:${m[2]}:${m[3]}.${m[4]}`.toLowerCase();
};

/** The render node among the entries of `/sys/bus/pci/devices/<addr>/drm` (`card1`, `renderD129`). */
export const renderNodeFromDrmEntries = (entries: readonly string[]): string | null => {
  const nodes = entries.filter((e) => /^renderD[0-9]{1,4}$/.test(e)).sort();
  return nodes.length === 1 ? `/dev/dri/${nodes[0]}` : null;
};

/**
 * Maps each AMD GPU of the inventory to its render node by PCI address. `drmEntries(addr)` lists
 * `/sys/bus/pci/devices/<addr>/drm` (null: no such device). A GPU without a PCI address, or whose
 * device shows no single render node, is left out and named in `problems`: the runtime then refuses
 * ranks that reserve it instead of guessing (render node numbers do not follow rocm-smi's order).
 */
export const mapAmdRenderNodes = (
  gpus: readonly InventoryGpu[],
  drmEntries: (pciAddress: string) => readonly string[] | null,
): { byUuid: Map<string, string>; problems: string[] } => {
  const byUuid = new Map<string, string>();
  const problems: string[] = [];
  for (const gpu of gpus) {
    if (gpu.vendor !== 'amd') continue;
    const address = gpu.pciBusId === null ? null : sysfsPciAddress(gpu.pciBusId);
    if (address === null) {
      problems.push(`${gpu.uuid}: no usable PCI address (${gpu.pciBusId ?? 'none'})`);
      continue;
    }
    const entries = drmEntries(address);
    const node = entries === null ? null : renderNodeFromDrmEntries(entries);
    if (node === null) {
      problems.push(`${gpu.uuid}: no single DRM render node under /sys/bus/pci/devices/${address}/drm`);
      continue;
    }
    byUuid.set(gpu.uuid, node);
  }
  return { byUuid, problems };
};

const gidOf = async (path: string): Promise<number | null> => {
  try {
    const s = await stat(path);
    // World-accessible device files need no group.
    return (s.mode & 0o006) === 0o006 ? null : s.gid;
  } catch {
    return null;
  }
};

const exists = async (path: string): Promise<boolean> => {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
};

/**
 * Reads the AMD device files for the inventory's GPUs from this host (`root` moves `/sys` and
 * `/dev` for tests). Never throws: what cannot be read is a problem, and those GPUs are refused.
 */
export const readAmdDevices = async (
  gpus: readonly InventoryGpu[],
  root = '/',
): Promise<{ devices: AmdDevices; problems: string[] }> => {
  const amd = gpus.filter((g) => g.vendor === 'amd');
  if (amd.length === 0) return { devices: { kfd: null, byUuid: new Map() }, problems: [] };
  const listings = new Map<string, readonly string[] | null>();
  for (const gpu of amd) {
    const address = gpu.pciBusId === null ? null : sysfsPciAddress(gpu.pciBusId);
    if (address === null || listings.has(address)) continue;
    listings.set(address, await readdir(join(root, 'sys/bus/pci/devices', address, 'drm')).catch(() => null));
  }
  const { byUuid, problems } = mapAmdRenderNodes(amd, (a) => listings.get(a) ?? null);
  const devices = new Map<string, AmdDevice>();
  for (const [uuid, node] of byUuid) {
    if (!(await exists(join(root, node)))) {
      problems.push(`${uuid}: ${node} does not exist`);
      continue;
    }
    devices.set(uuid, { renderNode: node, gid: await gidOf(join(root, node)) });
  }
  const kfdPath = join(root, 'dev/kfd');
  const kfd = (await exists(kfdPath)) ? { path: '/dev/kfd', gid: await gidOf(kfdPath) } : null;
  if (kfd === null) problems.push('/dev/kfd does not exist (amdgpu/ROCm kernel driver not loaded)');
  return { devices: { kfd, byUuid: devices }, problems };
};

/** What the docker runtime can give containers on this host; reported with the inventory. */
export interface ContainerGpuSupport {
  /** Docker Engine version; null when the engine does not answer. */
  readonly engine: string | null;
  readonly nvidia: {
    /** Device requests for the `nvidia` driver will work. */
    readonly available: boolean;
    /** How it was found (`runtime nvidia`, `nvidia-container-runtime-hook`) or why not. */
    readonly detail: string;
  };
  readonly amd: { readonly kfd: boolean; readonly renderNodes: number };
}

/** Where the NVIDIA container toolkit installs the hook Docker runs for `--gpus` device requests. */
const NVIDIA_HOOKS = ['/usr/bin/nvidia-container-runtime-hook', '/usr/bin/nvidia-container-toolkit'];

/**
 * Detects GPU support for containers: the NVIDIA container toolkit (a `nvidia` runtime registered
 * with the engine, or the prestart hook Docker's device requests call) and the AMD device files.
 */
export const probeContainerGpuSupport = async (docker: Docker, root = '/'): Promise<ContainerGpuSupport> => {
  let engine: string | null = null;
  let runtimes: string[] = [];
  try {
    const info = (await docker.info()) as { ServerVersion?: string; Runtimes?: Record<string, unknown> };
    engine = info.ServerVersion ?? 'unknown';
    runtimes = Object.keys(info.Runtimes ?? {});
  } catch {
    // The engine does not answer: reported as engine null.
  }
  let nvidia: ContainerGpuSupport['nvidia'];
  const hook = (
    await Promise.all(NVIDIA_HOOKS.map(async (h) => ((await exists(join(root, h))) ? h : null)))
  ).find((h) => h !== null);
  if (engine === null) nvidia = { available: false, detail: 'the Docker engine does not answer' };
  else if (hook !== undefined) nvidia = { available: true, detail: hook };
  else if (runtimes.includes('nvidia')) nvidia = { available: true, detail: 'runtime nvidia' };
  else nvidia = { available: false, detail: 'NVIDIA container toolkit not installed' };
  const kfd = await exists(join(root, 'dev/kfd'));
  const renderNodes = (await readdir(join(root, 'dev/dri')).catch(() => [] as string[])).filter((e) =>
    /^renderD[0-9]+$/.test(e),
  ).length;
  return { engine, nvidia, amd: { kfd, renderNodes } };
};
