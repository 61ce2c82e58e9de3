import type { Host, Inventory } from '@gpunet/contracts';
import { readFile } from 'node:fs/promises';
import type { BackendResult } from '../../domain/detection/detection.types';
import { mergeInventory } from '../../domain/detection/inventory';
import { parseSimulatedInventory } from '../../domain/detection/simulated-inventory';
import { type CommandRunner, execRunner } from '../command-runner';
import { detectAmd } from './amd.backend';
import { probeHost } from './host.probe';
import { detectNvidia } from './nvidia.backend';

/** A declared inventory file that does not validate; `issues` name the fields. */
export class InvalidInventoryFileError extends Error {
  override readonly name = 'InvalidInventoryFileError';
  readonly code = 'INVALID_INVENTORY_FILE' as const;
  constructor(
    readonly file: string,
    readonly issues: readonly { path: string; message: string }[],
  ) {
    super(`${file}: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`);
  }
}

export interface Detection {
  readonly inventory: Inventory;
  readonly host: Host;
  /** Per backend, with parse problems; for `edge status`. */
  readonly backends: readonly BackendResult[];
}

export const readTextOrUndefined = async (path: string): Promise<string | undefined> => {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
};

export interface DetectorOptions {
  readonly workDir: string;
  /** A declared inventory file: the simulated backend, instead of nvidia-smi and rocm-smi. */
  readonly simulate?: string;
  readonly run?: CommandRunner;
  readonly readText?: (path: string) => Promise<string | undefined>;
}

/** Detects this host's GPUs (every backend, independently) and its CPU, memory, disk and network. */
export const detect = async (options: DetectorOptions): Promise<Detection> => {
  const run = options.run ?? execRunner();
  const readText = options.readText ?? readTextOrUndefined;
  if (options.simulate !== undefined) {
    const text = await readText(options.simulate);
    if (text === undefined)
      throw new InvalidInventoryFileError(options.simulate, [{ path: '', message: 'cannot read the file' }]);
    const parsed = parseSimulatedInventory(text);
    if (!parsed.ok) throw new InvalidInventoryFileError(options.simulate, parsed.issues);
    const host = await probeHost({ workDir: options.workDir, run, readText, override: parsed.value.host });
    return { inventory: mergeInventory([parsed.value.backend]), host, backends: [parsed.value.backend] };
  }
  const [nvidia, amd, host] = await Promise.all([
    detectNvidia(run),
    detectAmd(run, readText),
    probeHost({ workDir: options.workDir, run, readText }),
  ]);
  return { inventory: mergeInventory([nvidia, amd]), host, backends: [nvidia, amd] };
};
