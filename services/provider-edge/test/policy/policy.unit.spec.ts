import { PolicySummarySchema } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import { mergeInventory } from '../../src/domain/detection/inventory';
import { parseSimulatedInventory } from '../../src/domain/detection/simulated-inventory';
import { parsePolicy, POLICY_TEMPLATE } from '../../src/domain/policy/policy';
import { resolveSharedGpus, summarizePolicy } from '../../src/domain/policy/shared-gpus';
import { fixture } from '../support/fixtures';
import { testHost } from '../support/host';

const ok = (text: string) => {
  const r = parsePolicy(text);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.policy;
};

describe('parsePolicy', () => {
  it('reads a full policy into base units', () => {
    const policy = ok(fixture('policy', 'lab.policy.yaml'));
    expect(policy).toMatchObject({
      name: 'lab-rig-1',
      maxGpusPerJob: 2,
      reserveCpuMillicores: 4000,
      reserveMemoryBytes: 16 * 1024 ** 3,
      images: ['nvcr.io/nvidia/', 'docker.io/pytorch/'],
      pricing: {
        asset: 'USDC',
        decimals: 6,
        floors: [
          { model: 'H100', perGpuHourMinor: 2_500_000n },
          { model: 'A100 80GB', perGpuHourMinor: 1_200_000n },
        ],
        defaultMinor: 400_000n,
      },
      subnets: ['public', 'research'],
      maxJobDurationMs: 12 * 3600_000,
      location: { continent: 'EU', country: 'DE', city: 'Berlin' },
    });
    expect(policy.share).toEqual([
      { by: 'index', vendor: null, index: 0, path: 'gpus.share[0]' },
      { by: 'index', vendor: null, index: 1, path: 'gpus.share[1]' },
      { by: 'uuid', uuid: 'GPU-3', path: 'gpus.share[2]' },
    ]);
  });

  it('accepts the template `gpunet edge init` writes', () => {
    expect(ok(POLICY_TEMPLATE).name).toBe('my-gpu-host');
    expect(ok(POLICY_TEMPLATE).sandboxRuntime).toBe('runc');
  });

  it('sandbox.runtime: runc by default, runsc when asked, anything else named in the error', () => {
    const base = fixture('policy', 'lab.policy.yaml');
    expect(ok(base).sandboxRuntime).toBe('runc');
    expect(ok(`${base}\nsandbox:\n  runtime: runsc\n`).sandboxRuntime).toBe('runsc');
    expect(ok(`${base}\nsandbox: {}\n`).sandboxRuntime).toBe('runc');
    const bad = parsePolicy(`${base}\nsandbox:\n  runtime: kata\n`);
    expect(bad.ok ? [] : bad.issues).toEqual([{ path: 'sandbox.runtime', message: 'runc or runsc' }]);
    const unknown = parsePolicy(`${base}\nsandbox:\n  runtime: runsc\n  platform: kvm\n`);
    expect(unknown.ok ? [] : unknown.issues.map((i) => i.path)).toEqual(['sandbox']);
  });

  it('rejects a malformed file with every field path at once', () => {
    const r = parsePolicy(fixture('policy', 'malformed.policy.yaml'));
    expect(r.ok).toBe(false);
    const paths = r.ok ? [] : r.issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'version',
        'name',
        'gpus.max_per_job',
        'cpu.reserve_cores',
        'images.allow',
        'pricing.asset',
        'pricing.floors[0].per_gpu_hour',
        'subnets[0]',
        'availability.windows[0].days[0]',
        'availability.windows[0].from',
        '',
      ]),
    );
    // The unknown top-level key is named.
    expect(r.ok ? '' : r.issues.find((i) => i.path === '')?.message).toContain('colour');
  });

  it.each([
    ['an empty file', '', '', 'empty'],
    ['not YAML', 'version: [1', '', 'not YAML'],
    ['a bad size', POLICY_TEMPLATE.replace('reserve: 8GiB', 'reserve: 8 gigs'), 'memory.reserve', ''],
    [
      'a bad duration',
      POLICY_TEMPLATE.replace('max_duration: 24h', 'max_duration: forever'),
      'jobs.max_duration',
      '',
    ],
    [
      'too many decimals',
      POLICY_TEMPLATE.replace("'0.30'", "'0.3000001'"),
      'pricing.default_per_gpu_hour',
      'decimal',
    ],
    [
      'an unknown asset without decimals',
      POLICY_TEMPLATE.replace('asset: USDC', 'asset: FOO'),
      'pricing.decimals',
      'FOO',
    ],
    [
      'an unknown time zone',
      POLICY_TEMPLATE.replace(
        '# availability:\n#   time_zone: Europe/Berlin\n#   windows:\n#     - { days: [mon, tue, wed, thu, fri], from: "19:00", to: "07:00" }',
        'availability:\n  time_zone: Mars/Olympus\n  windows:\n    - { days: [mon], from: "19:00", to: "07:00" }',
      ),
      'availability.time_zone',
      'Mars',
    ],
    [
      'a wildcard inside a prefix',
      POLICY_TEMPLATE.replace('- nvcr.io/nvidia/', '- nvcr.io/*/x'),
      'images.allow[0]',
      '',
    ],
    [
      'a bad GPU selector',
      POLICY_TEMPLATE.replace('share: all', 'share: ["not a uuid!"]'),
      'gpus.share[0]',
      '',
    ],
  ])('rejects %s', (_name, text, path, message) => {
    const r = parsePolicy(text);
    expect(r.ok).toBe(false);
    const issue = r.ok ? undefined : r.issues.find((i) => i.path === path);
    expect(issue, JSON.stringify(r)).toBeDefined();
    expect(issue!.message).toContain(message);
  });
});

describe('disk.workspace_per_rank', () => {
  const withDisk = (value: string) =>
    parsePolicy(POLICY_TEMPLATE.replace('workspace_per_rank: 50GiB', `workspace_per_rank: ${value}`));
  const issue = (r: ReturnType<typeof parsePolicy>, path: string) =>
    r.ok ? undefined : r.issues.find((i) => i.path === path);

  it('defaults to 50GiB when the policy has no disk section', () => {
    const text = POLICY_TEMPLATE.replace(/\ndisk:\n(?: {2}.*\n)+/, '\n');
    expect(text).not.toContain('disk:');
    expect(ok(text).workspaceBytesPerRank).toBe(50 * 1024 ** 3);
    expect(ok(POLICY_TEMPLATE).workspaceBytesPerRank).toBe(50 * 1024 ** 3);
  });

  it.each([
    ['a size', '"200GiB"', 200 * 1024 ** 3],
    ['a decimal size', '"1.5TB"', 1.5e12],
    ['bytes', '1073741824', 1024 ** 3],
    ['the smallest', '16MiB', 16 * 1024 ** 2],
    ['no quota, said so', 'unlimited', null],
  ])('reads %s', (_name, value, bytes) => {
    const r = withDisk(value);
    expect(r.ok ? r.policy.workspaceBytesPerRank : r.issues).toBe(bytes);
  });

  it.each([
    ['no unit', '"50"', 'a number and a unit'],
    ['bits', '50Gb', 'bits'],
    ['too small', '1MiB', 'between 16MiB and 16TiB'],
    ['too large', '20TiB', 'between 16MiB and 16TiB'],
    ['zero bytes', '0', 'between 16MiB and 16TiB'],
    ['a fraction of a byte', '1.5', ''],
  ])('rejects %s, naming the key', (_name, value, message) => {
    const found = issue(withDisk(value), 'disk.workspace_per_rank');
    expect(found, value).toBeDefined();
    expect(found!.message).toContain(message);
  });

  it('rejects an unknown key inside disk', () => {
    const r = parsePolicy(POLICY_TEMPLATE.replace('workspace_per_rank: 50GiB', 'quota: 50GiB'));
    expect(r.ok ? '' : JSON.stringify(r.issues)).toContain('quota');
  });
});

describe('network keys: NOT_SUPPORTED', () => {
  it.each(['network', 'egress', 'internet'])(
    '`%s` is refused NOT_SUPPORTED with the reason, not ignored',
    (key) => {
      const r = parsePolicy(`${POLICY_TEMPLATE}\n${key}:\n  allow: true\n`);
      expect(r.ok).toBe(false);
      const issues = r.ok ? [] : r.issues;
      // One issue, at the key, saying why; not zod's bare "unrecognized key" as well.
      expect(issues).toEqual([{ path: key, message: expect.stringMatching(/^NOT_SUPPORTED: /) }]);
      expect(issues[0]!.message).toMatch(/overlay peers and nothing else/);
    },
  );

  it('is reported with the policy’s other problems at once', () => {
    const r = parsePolicy(`${POLICY_TEMPLATE.replace('max_per_job: 8', 'max_per_job: 0')}\negress: open\n`);
    expect(r.ok ? [] : r.issues.map((i) => i.path).sort()).toEqual(['egress', 'gpus.max_per_job']);
  });

  it('also when the rest of the policy is valid but resolves with errors', () => {
    const r = parsePolicy(`${POLICY_TEMPLATE.replace('reserve: 8GiB', 'reserve: 8 gigs')}\ninternet: true\n`);
    expect(r.ok ? [] : r.issues.map((i) => i.path).sort()).toEqual(['internet', 'memory.reserve']);
  });
});

describe('resolveSharedGpus', () => {
  const simulated = parseSimulatedInventory(fixture('simulated', 'mixed.inventory.yaml'));
  if (!simulated.ok) throw new Error('fixture');
  const inventory = mergeInventory([simulated.value.backend]);
  const withShare = (share: string) => ok(POLICY_TEMPLATE.replace('share: all', `share: ${share}`));

  it('shares all, by vendor:index and by UUID', () => {
    expect(resolveSharedGpus(withShare('all'), inventory).uuids).toEqual([
      'SIM-amd-0',
      'SIM-amd-1',
      'SIM-nvidia-0',
    ]);
    expect(resolveSharedGpus(withShare('["amd:1", "SIM-nvidia-0"]'), inventory)).toEqual({
      uuids: ['SIM-amd-1', 'SIM-nvidia-0'],
      errors: [],
      warnings: [],
    });
  });

  it('refuses GPUs the host does not have and ambiguous indices on a mixed host', () => {
    const r = resolveSharedGpus(withShare('[0, 7, "GPU-nope"]'), inventory);
    expect(r.errors).toEqual([
      { path: 'gpus.share[0]', message: 'index 0 is ambiguous on this mixed host: write nvidia:0 or amd:0' },
      { path: 'gpus.share[1]', message: 'no GPU with index 7 on this host (it has amd:0, amd:1, nvidia:0)' },
      {
        path: 'gpus.share[2]',
        message: 'no GPU with UUID GPU-nope on this host (it has amd:0, amd:1, nvidia:0)',
      },
    ]);
  });

  it('leaves MIG-mode GPUs out and says so', () => {
    const mig = {
      ...inventory,
      gpus: inventory.gpus.map((g) =>
        g.uuid === 'SIM-nvidia-0' ? { ...g, mig: { enabled: true, devices: [] } } : g,
      ),
    };
    const r = resolveSharedGpus(withShare('all'), mig);
    expect(r.uuids).toEqual(['SIM-amd-0', 'SIM-amd-1']);
    expect(r.warnings[0]?.message).toContain('MIG mode');
  });

  it('summarizes the policy for the control plane', () => {
    const policy = ok(fixture('policy', 'lab.policy.yaml'));
    const summary = summarizePolicy(policy, ['SIM-nvidia-0'], testHost({ cores: 32, memoryGiB: 128 }));
    expect(PolicySummarySchema.parse(summary)).toEqual(summary);
    expect(summary).toMatchObject({
      cpuMillicores: 28_000,
      memoryBytes: 112 * 1024 ** 3,
      pricing: {
        asset: 'USDC',
        defaultFloorMinor: '400000',
        floors: [{ model: 'H100', perGpuHourMinor: '2500000' }, { model: 'A100 80GB' }],
      },
    });
  });
});
