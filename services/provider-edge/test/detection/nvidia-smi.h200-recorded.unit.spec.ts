import { GpuSchema } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import {
  parseCudaVersion,
  parseNvidiaSmiList,
  parseNvidiaSmiQuery,
  parseNvidiaTopology,
  QUERY_FIELDS,
  QUERY_FIELDS_WITHOUT_COMPUTE_CAP,
} from '../../src/domain/detection/nvidia-smi.parser';
import type { CommandRunner } from '../../src/infra/command-runner';
import { detectNvidia } from '../../src/infra/detect/nvidia.backend';
import { fixture } from '../support/fixtures';

/*
 * Recorded, not reconstructed: nvidia-smi's own output on one NVIDIA H200 (driver 580.159.04,
 * CUDA 13.0), written by tools/gpu-bench/device-check.sh on 2026-12-04 (h200-1x.provenance.txt).
 */
const H200_UUID = 'GPU-f068a739-653e-76ee-b8d0-1031205bc4bf';
const MiB = 1024 * 1024;
const recorded = (name: string) => fixture('nvidia', `h200-1x${name}`);

/** Answers the edge's nvidia-smi invocations with what the H200 printed for them. */
const replay: CommandRunner = async (program, args) => {
  const key = args.join(' ');
  const files: Record<string, string> = {
    [`--query-gpu=${QUERY_FIELDS.join(',')} --format=csv`]: '.query.csv',
    '-q -d COMPUTE': '.compute.txt',
    '-L': '.list.txt',
    'topo -m': '.topo.txt',
  };
  const file = program === 'nvidia-smi' ? files[key] : undefined;
  return file === undefined
    ? { found: true, code: 2, stdout: '', stderr: `not recorded: ${program} ${key}` }
    : { found: true, code: 0, stdout: recorded(file), stderr: '' };
};

describe('nvidia-smi outputs recorded on an H200 (driver 580.159.04, 2026-12-04)', () => {
  const h200 = {
    index: 0,
    uuid: H200_UUID,
    vendor: 'nvidia',
    model: 'NVIDIA H200',
    vramBytes: 143771 * MiB,
    driverVersion: '580.159.04',
    computeCapability: { major: 9, minor: 0 },
    pciBusId: '00000000:00:06.0',
    utilizationPercent: 0,
    mig: { enabled: false, devices: [] },
  };

  it('parses the query the edge runs, recorded on an H200, into one contract-valid GPU', () => {
    const { value, problems } = parseNvidiaSmiQuery(recorded('.query.csv'));
    expect(problems).toEqual([]);
    expect(value).toEqual([expect.objectContaining(h200)]);
    const { utilizationPercent: _u, ...gpu } = value[0]!;
    expect(GpuSchema.safeParse(gpu).success).toBe(true);
  });

  it('parses the noheader,nounits and the compute_cap-less queries recorded on an H200 alike', () => {
    const bare = parseNvidiaSmiQuery(recorded('-noheader-nounits.query.csv'));
    expect(bare.problems).toEqual([]);
    expect(bare.value).toEqual([expect.objectContaining(h200)]);
    const old = parseNvidiaSmiQuery(
      recorded('-without-compute-cap.query.csv'),
      QUERY_FIELDS_WITHOUT_COMPUTE_CAP,
    );
    expect(old.problems).toEqual([]);
    expect(old.value).toEqual([expect.objectContaining({ ...h200, computeCapability: null })]);
  });

  it('reads the CUDA version from -q -d COMPUTE and the banner recorded on an H200', () => {
    expect(parseCudaVersion(recorded('.compute.txt'))).toBe('13.0');
    expect(parseCudaVersion(recorded('.banner.txt'))).toBe('13.0');
    expect(recorded('.q.xml')).toContain(`<uuid>${H200_UUID}</uuid>`);
  });

  it('reads -L and topo -m of the single H200 (no MIG instances, no links, escapes and legend ignored)', () => {
    const list = parseNvidiaSmiList(recorded('.list.txt'));
    expect(list.problems).toEqual([]);
    expect(list.value.get(H200_UUID)).toEqual([]);
    expect(parseNvidiaTopology(recorded('.topo.txt'))).toEqual({ value: [], problems: [] });
  });

  it('detects the H200 end to end from its recorded outputs, as the edge would on that host', async () => {
    const result = await detectNvidia(replay);
    expect(result).toMatchObject({ name: 'nvidia', status: 'ok', detail: null, links: [], problems: [] });
    expect(result.gpus).toEqual([{ ...h200, architecture: null, rocmVersion: null, cudaVersion: '13.0' }]);
  });
});
