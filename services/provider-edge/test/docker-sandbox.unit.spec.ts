import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseNvidiaSmiList, parseNvidiaSmiQuery } from '../src/domain/detection/nvidia-smi.parser';
import { parseRocmSmiJson } from '../src/domain/detection/rocm-smi.parser';
import {
  mapAmdRenderNodes,
  renderNodeFromDrmEntries,
  sysfsPciAddress,
} from '../src/infra/runtime/docker-host';
import {
  type AmdDevices,
  CONTAINER_SCRATCH,
  gpuAccess,
  LABEL,
  NO_AMD_DEVICES,
  rankContainerName,
  rankContainerOptions,
  type RankContainerInput,
  RUNSC_PIDS_HEADROOM,
  SANDBOX_USER,
  sandboxContainerOptions,
  toContainerPath,
} from '../src/infra/runtime/docker-sandbox';
import { type RankLaunch, RankStartError } from '../src/app/rank-runtime.port';
import { fixture } from './support/fixtures';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

const launch = (over: Partial<RankLaunch> = {}): RankLaunch => ({
  jobId: '0190f3a2-6c1e-7b3a-9d1e-1f2a3b4c5d6e',
  attempt: 1,
  rank: 3,
  image: 'gpunet/job-base:torch-cpu',
  cmd: ['python3', 'train.py'],
  entrypoint: null,
  env: { RANK: '3', GPUNET_WORKSPACE: '/var/lib/gpunet/ws/j1-r3', DATA: '/var/lib/gpunet/ws/j1-r3/data' },
  workspace: '/var/lib/gpunet/ws/j1-r3',
  workingDir: '/var/lib/gpunet/ws/j1-r3/src',
  gpuUuids: [],
  gpuVendor: null,
  limits: { cpuMillicores: 2_500, memoryBytes: 8 * GiB, pids: null },
  netns: null,
  labels: { 'org.gpunet.agent': 'rank-agent' },
  ...over,
});

const input = (
  over: Partial<RankContainerInput> = {},
  launchOver: Partial<RankLaunch> = {},
): RankContainerInput => ({
  edgeId: 'edge-7',
  launch: launch(launchOver),
  image: { ref: 'gpunet/job-base:torch-cpu', id: 'sha256:' + 'a'.repeat(64), digest: null },
  network: { mode: 'none' },
  limits: { maxMemoryBytes: 64 * GiB, maxCpuMillicores: 16_000 },
  amd: NO_AMD_DEVICES,
  ...over,
});

const startError = (fn: () => unknown): RankStartError => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RankStartError);
    return e as RankStartError;
  }
  throw new Error('expected a RankStartError');
};

describe('rankContainerOptions: the sandbox every rank container gets', () => {
  const options = rankContainerOptions(input());
  const host = options.HostConfig!;

  it('drops every capability, forbids new privileges, keeps the default seccomp profile', () => {
    expect(host.Privileged).toBe(false);
    expect(host.CapDrop).toEqual(['ALL']);
    expect(host.CapAdd).toEqual([]);
    expect(host.SecurityOpt).toEqual(['no-new-privileges:true']);
    expect(JSON.stringify(host.SecurityOpt)).not.toMatch(/seccomp|apparmor=unconfined/);
  });

  it('runs as 65532 on a read-only root with a bounded, noexec /tmp', () => {
    expect(options.User).toBe(SANDBOX_USER);
    expect(host.ReadonlyRootfs).toBe(true);
    expect(host.Tmpfs).toEqual({ '/tmp': `rw,nosuid,nodev,noexec,size=${256 * MiB}` });
  });

  it('mounts the workspace, and only it, at /scratch and starts in the translated working directory', () => {
    expect(host.Binds).toEqual([]);
    expect(host.Mounts).toEqual([
      {
        Type: 'bind',
        Source: '/var/lib/gpunet/ws/j1-r3',
        Target: CONTAINER_SCRATCH,
        ReadOnly: false,
        BindOptions: { Propagation: 'rprivate' },
      },
    ]);
    expect(options.WorkingDir).toBe('/scratch/src');
    expect(options.Env).toEqual(
      expect.arrayContaining(['GPUNET_WORKSPACE=/scratch', 'DATA=/scratch/data', 'RANK=3']),
    );
  });

  it('has no network, shares no host namespace and publishes nothing', () => {
    expect(host.NetworkMode).toBe('none');
    expect(host.IpcMode).toBe('private');
    expect(host.PidMode).toBe('');
    expect(host.UsernsMode).toBe('');
    expect(host.PortBindings).toEqual({});
    expect(host.PublishAllPorts).toBe(false);
    expect(host.ExtraHosts).toEqual([]);
  });

  it('takes memory, CPU and pids limits from the spec, with no swap', () => {
    expect(host.Memory).toBe(8 * GiB);
    expect(host.MemorySwap).toBe(8 * GiB);
    expect(host.NanoCpus).toBe(2_500_000_000);
    expect(host.PidsLimit).toBe(1024);
    expect(host.OomKillDisable).toBe(false);
    expect(
      rankContainerOptions(input({}, { limits: { cpuMillicores: 1000, memoryBytes: GiB, pids: 64 } }))
        .HostConfig!.PidsLimit,
    ).toBe(64);
  });

  it('runs tini as PID 1, never restarts, and is not removed by the engine before its exit is read', () => {
    expect(host.Init).toBe(true);
    expect(host.RestartPolicy).toEqual({ Name: '', MaximumRetryCount: 0 });
    expect(host.AutoRemove).toBe(false);
  });

  it('runs the pinned image id and labels the container as gpunet’s', () => {
    expect(options.Image).toBe('sha256:' + 'a'.repeat(64));
    expect(options.Labels).toMatchObject({
      'org.gpunet.agent': 'rank-agent',
      [LABEL.managed]: 'true',
      [LABEL.edgeId]: 'edge-7',
      [LABEL.role]: 'rank',
      [LABEL.jobId]: '0190f3a2-6c1e-7b3a-9d1e-1f2a3b4c5d6e',
      [LABEL.attempt]: '1',
      [LABEL.rank]: '3',
      [LABEL.imageRef]: 'gpunet/job-base:torch-cpu',
      [LABEL.imageId]: 'sha256:' + 'a'.repeat(64),
    });
    expect(options.name).toBe('gpunet-edge-7-0190f3a2-6c1e-7b3a-9d1e-1f2a3b4c5d6e-a1-r3');
  });

  it('joins the job’s network sandbox when the rank has a job network', () => {
    const joined = rankContainerOptions(input({ network: { mode: 'container', id: 'abc123' } }));
    expect(joined.HostConfig!.NetworkMode).toBe('container:abc123');
    expect(joined.Hostname).toBeUndefined();
  });

  it('keeps device variables and LD_PRELOAD out of the spec’s hands', () => {
    const o = rankContainerOptions(
      input({}, { env: { NVIDIA_VISIBLE_DEVICES: 'all', LD_PRELOAD: '/scratch/x.so', OK: '1' } }),
    );
    expect(o.Env).toEqual(['OK=1', 'NVIDIA_VISIBLE_DEVICES=void']);
  });
});

describe('rankContainerOptions refuses what would weaken the sandbox, naming the field', () => {
  const cases: [string, Partial<RankLaunch>, Partial<RankContainerInput>, string][] = [
    [
      'memory above the provider’s limit',
      { limits: { cpuMillicores: 1000, memoryBytes: 65 * GiB, pids: null } },
      {},
      'limits.memoryBytes',
    ],
    [
      'memory below Docker’s minimum',
      { limits: { cpuMillicores: 1000, memoryBytes: MiB, pids: null } },
      {},
      'limits.memoryBytes',
    ],
    [
      'CPU above the provider’s limit',
      { limits: { cpuMillicores: 16_001, memoryBytes: GiB, pids: null } },
      {},
      'limits.cpuMillicores',
    ],
    ['zero CPU', { limits: { cpuMillicores: 0, memoryBytes: GiB, pids: null } }, {}, 'limits.cpuMillicores'],
    [
      'pids above the provider’s limit',
      { limits: { cpuMillicores: 1000, memoryBytes: GiB, pids: 100_000 } },
      {},
      'limits.pids',
    ],
    ['a relative workspace', { workspace: 'ws', workingDir: 'ws' }, {}, 'workspace'],
    ['a working directory outside the workspace', { workingDir: '/etc' }, {}, 'workingDir'],
    [
      'a working directory that climbs out',
      { workingDir: '/var/lib/gpunet/ws/j1-r3/../../x' },
      {},
      'workingDir',
    ],
    [
      'a workspace prefix that is not a parent',
      { workingDir: '/var/lib/gpunet/ws/j1-r3x' },
      {},
      'workingDir',
    ],
  ];
  it.each(cases)('%s', (_name, launchOver, over, field) => {
    expect(startError(() => rankContainerOptions(input(over, launchOver))).field).toBe(field);
  });
});

describe('NVIDIA device requests on reconstructed multi-GPU inventories: exact UUIDs, never all', () => {
  const h100 = parseNvidiaSmiQuery(fixture('nvidia', 'h100-sxm-8x.query.csv')).value;

  it('8× H100: a rank reserving GPUs 2 and 5 gets a request for exactly those two UUIDs', () => {
    const uuids = [h100[2]!.uuid, h100[5]!.uuid];
    const o = rankContainerOptions(input({}, { gpuUuids: uuids, gpuVendor: 'nvidia' }));
    expect(o.HostConfig!.DeviceRequests).toEqual([
      { Driver: 'nvidia', Count: 0, DeviceIDs: uuids, Capabilities: [['gpu']] },
    ]);
    expect(o.HostConfig!.Devices).toEqual([]);
    expect(o.Env).toContain(`NVIDIA_VISIBLE_DEVICES=${uuids.join(',')}`);
    expect(JSON.stringify(o)).not.toMatch(/"all"|Count":-1/);
    for (const other of h100.filter((_, i) => i !== 2 && i !== 5))
      expect(JSON.stringify(o)).not.toContain(other.uuid);
  });

  it('8× H100: all eight reserved are still named one by one', () => {
    const access = gpuAccess({ gpuUuids: h100.map((g) => g.uuid), gpuVendor: 'nvidia' }, NO_AMD_DEVICES);
    expect(access.deviceRequests[0]!.DeviceIDs).toEqual(h100.map((g) => g.uuid));
    expect(access.deviceRequests[0]!.Count).toBe(0);
  });

  it('A100 in MIG mode: a MIG instance is requested by its MIG UUID', () => {
    const gpus = parseNvidiaSmiQuery(fixture('nvidia', 'a100-mig.query.csv')).value;
    const mig = parseNvidiaSmiList(fixture('nvidia', 'a100-mig.list.txt')).value.get(gpus[0]!.uuid)!;
    const access = gpuAccess({ gpuUuids: [mig[1]!.uuid], gpuVendor: 'nvidia' }, NO_AMD_DEVICES);
    expect(access.deviceRequests).toEqual([
      {
        Driver: 'nvidia',
        Count: 0,
        DeviceIDs: ['MIG-815d2802-8272-83e0-ad84-173581569969'],
        Capabilities: [['gpu']],
      },
    ]);
  });

  it('mixed RTX host: one GPU of two', () => {
    const gpus = parseNvidiaSmiQuery(fixture('nvidia', 'rtx-mixed.query.csv')).value;
    const access = gpuAccess({ gpuUuids: [gpus[1]!.uuid], gpuVendor: 'nvidia' }, NO_AMD_DEVICES);
    expect(access.deviceRequests[0]!.DeviceIDs).toEqual([gpus[1]!.uuid]);
  });

  it.each([['all'], ['0'], ['none'], ['GPU-'], ['nvidia:0'], ['GPU-a,GPU-b']])('refuses %j', (uuid) => {
    expect(startError(() => gpuAccess({ gpuUuids: [uuid], gpuVendor: 'nvidia' }, NO_AMD_DEVICES)).field).toBe(
      'gpuUuids[0]',
    );
  });

  it('refuses a GPU listed twice and GPUs without a vendor', () => {
    const u = h100[0]!.uuid;
    expect(startError(() => gpuAccess({ gpuUuids: [u, u], gpuVendor: 'nvidia' }, NO_AMD_DEVICES)).field).toBe(
      'gpuUuids',
    );
    expect(startError(() => gpuAccess({ gpuUuids: [u], gpuVendor: null }, NO_AMD_DEVICES)).field).toBe(
      'gpuVendor',
    );
  });

  it('a rank without GPUs gets no device at all, and NVIDIA_VISIBLE_DEVICES=void against images that say all', () => {
    const o = rankContainerOptions(input());
    expect(o.HostConfig!.DeviceRequests).toEqual([]);
    expect(o.HostConfig!.Devices).toEqual([]);
    expect(o.Env).toContain('NVIDIA_VISIBLE_DEVICES=void');
  });
});

describe('simulated GPUs (a declared inventory): no device, and labelled simulated', () => {
  const sim = ['SIM-alpha-0', 'SIM-alpha-1'];

  it('requests no device, hides CUDA, names the reserved GPUs in GPUNET_SIMULATED_GPUS and labels the container', () => {
    const o = rankContainerOptions(input({ simulatedGpus: true }, { gpuUuids: sim, gpuVendor: 'nvidia' }));
    expect(o.HostConfig!.DeviceRequests).toEqual([]);
    expect(o.HostConfig!.Devices).toEqual([]);
    expect(o.Env).toEqual(
      expect.arrayContaining([
        'NVIDIA_VISIBLE_DEVICES=void',
        'CUDA_VISIBLE_DEVICES=',
        'GPUNET_SIMULATED_GPUS=SIM-alpha-0,SIM-alpha-1',
      ]),
    );
    expect(o.Labels![LABEL.gpus]).toBe('simulated');
  });

  it('keeps the variable out of the spec’s hands, and a real host’s rank unlabelled', () => {
    const o = rankContainerOptions(
      input(
        { simulatedGpus: true },
        { gpuUuids: sim, gpuVendor: 'nvidia', env: { GPUNET_SIMULATED_GPUS: 'GPU-x' } },
      ),
    );
    expect(o.Env).toContain('GPUNET_SIMULATED_GPUS=SIM-alpha-0,SIM-alpha-1');
    expect(o.Env).not.toContain('GPUNET_SIMULATED_GPUS=GPU-x');
    expect(rankContainerOptions(input()).Labels![LABEL.gpus]).toBeUndefined();
  });

  it('still refuses a GPU listed twice; on a real host the same ids are refused as not NVIDIA UUIDs', () => {
    expect(
      startError(() =>
        rankContainerOptions(
          input({ simulatedGpus: true }, { gpuUuids: [sim[0]!, sim[0]!], gpuVendor: 'nvidia' }),
        ),
      ).field,
    ).toBe('gpuUuids');
    expect(
      startError(() => rankContainerOptions(input({}, { gpuUuids: sim, gpuVendor: 'nvidia' }))).field,
    ).toBe('gpuUuids[0]');
  });
});

describe('policy sandbox.runtime: runsc runs ranks on gVisor, CPU ranks only', () => {
  it('runc leaves the daemon’s default runtime and the pids limit as they are', () => {
    const host = rankContainerOptions(
      input({ ociRuntime: 'runc' }, { limits: { ...launch().limits, pids: 64 } }),
    ).HostConfig!;
    expect(host.Runtime).toBeUndefined();
    expect(host.PidsLimit).toBe(64);
    expect(rankContainerOptions(input()).HostConfig!.Runtime).toBeUndefined();
  });

  it('runsc sets the runtime and gives gVisor’s own threads headroom on the pids limit', () => {
    const host = rankContainerOptions(
      input({ ociRuntime: 'runsc' }, { limits: { ...launch().limits, pids: 64 } }),
    ).HostConfig!;
    expect(host.Runtime).toBe('runsc');
    expect(host.PidsLimit).toBe(64 + RUNSC_PIDS_HEADROOM);
    expect(host.CapDrop).toEqual(['ALL']);
    expect(host.ReadonlyRootfs).toBe(true);
  });

  it('refuses a rank with GPUs on runsc, saying why; simulated GPUs (no device) still run', () => {
    const e = startError(() =>
      rankContainerOptions(
        input({ ociRuntime: 'runsc' }, { gpuUuids: [`GPU-${'1'.repeat(8)}`], gpuVendor: 'nvidia' }),
      ),
    );
    expect(e.field).toBe('gpuUuids');
    expect(e.code).toBe('RUNTIME_UNAVAILABLE');
    expect(e.message).toMatch(/sandbox\.runtime: runsc.*no nvproxy.*sandbox\.runtime: runc/);
    const sim = rankContainerOptions(
      input({ ociRuntime: 'runsc', simulatedGpus: true }, { gpuUuids: ['SIM-0'], gpuVendor: 'nvidia' }),
    );
    expect(sim.HostConfig!.Runtime).toBe('runsc');
    expect(sim.HostConfig!.DeviceRequests).toEqual([]);
  });
});

describe('AMD devices on reconstructed inventories: /dev/kfd plus the reserved render nodes', () => {
  const mi250x = parseRocmSmiJson(fixture('amd', 'mi250x-8gcd.rocm-smi.json')).value;
  /*
   * /sys/bus/pci/devices/<addr>/drm of such a host. Constructed, not recorded (see
   * test/fixtures/README.md): render minors deliberately do NOT follow rocm-smi's card order, which
   * is why the runtime maps by PCI address and never by index.
   */
  const drm = new Map<string, string[]>(
    mi250x.map((g, i) => [sysfsPciAddress(g.pciBusId!)!, [`card${i + 1}`, `renderD${135 - i}`]]),
  );
  const mapped = mapAmdRenderNodes(mi250x, (a) => drm.get(a) ?? null);
  const amd: AmdDevices = {
    kfd: { path: '/dev/kfd', gid: 44 },
    byUuid: new Map([...mapped.byUuid].map(([uuid, node]) => [uuid, { renderNode: node, gid: 109 }])),
  };

  it('maps all eight GCDs by PCI address', () => {
    expect(mapped.problems).toEqual([]);
    expect(mapped.byUuid.size).toBe(8);
    expect(mapped.byUuid.get(mi250x[0]!.uuid)).toBe('/dev/dri/renderD135');
    expect(mapped.byUuid.get(mi250x[7]!.uuid)).toBe('/dev/dri/renderD128');
  });

  it('a rank reserving GCDs 1 and 6 gets /dev/kfd and exactly their render nodes, and their groups', () => {
    const o = rankContainerOptions(
      input({ amd }, { gpuUuids: [mi250x[1]!.uuid, mi250x[6]!.uuid], gpuVendor: 'amd' }),
    );
    expect(o.HostConfig!.Devices).toEqual([
      { PathOnHost: '/dev/kfd', PathInContainer: '/dev/kfd', CgroupPermissions: 'rw' },
      { PathOnHost: '/dev/dri/renderD134', PathInContainer: '/dev/dri/renderD134', CgroupPermissions: 'rw' },
      { PathOnHost: '/dev/dri/renderD129', PathInContainer: '/dev/dri/renderD129', CgroupPermissions: 'rw' },
    ]);
    expect(o.HostConfig!.GroupAdd).toEqual(['44', '109']);
    expect(o.HostConfig!.DeviceRequests).toEqual([]);
    expect(JSON.stringify(o.HostConfig!.Devices)).not.toMatch(/card[0-9]|\/dev\/dri"/);
  });

  it('refuses a GPU whose render node the inventory does not know (RX 5700 XT, id from its PCI address)', () => {
    const rx = parseRocmSmiJson(fixture('amd', 'rx5700xt.rocm-smi.json')).value;
    expect(rx[0]!.uuid).toBe('AMD-PCI-0000:03:00.0');
    const e = startError(() => gpuAccess({ gpuUuids: [rx[0]!.uuid], gpuVendor: 'amd' }, amd));
    expect(e.field).toBe('gpuUuids[0]');
    expect(e.message).toMatch(/no DRM render node is known/);
  });

  it('refuses AMD GPUs on a host without /dev/kfd', () => {
    expect(
      startError(() => gpuAccess({ gpuUuids: [mi250x[0]!.uuid], gpuVendor: 'amd' }, { ...amd, kfd: null }))
        .field,
    ).toBe('gpuVendor');
  });

  it('names the GPUs whose render node cannot be found', () => {
    const partial = mapAmdRenderNodes(mi250x, (a) =>
      a === sysfsPciAddress(mi250x[0]!.pciBusId!) ? ['card1'] : (drm.get(a) ?? null),
    );
    expect(partial.byUuid.has(mi250x[0]!.uuid)).toBe(false);
    expect(partial.problems).toEqual([expect.stringContaining(mi250x[0]!.uuid)]);
  });
});

describe('host helpers', () => {
  it.each([
    ['0000:C1:00.0', '0000:c1:00.0'],
    ['00000000:18:00.0', '0000:18:00.0'],
    ['0000:03:00.0', '0000:03:00.0'],
    ['03:00.0', null],
    ['0000:03:00.9', null],
    ['../../etc', null],
  ])('sysfsPciAddress(%j) = %j', (given, expected) => {
    expect(sysfsPciAddress(given)).toBe(expected);
  });

  it('renderNodeFromDrmEntries wants exactly one render node', () => {
    expect(renderNodeFromDrmEntries(['card0', 'renderD128', 'controlD64'])).toBe('/dev/dri/renderD128');
    expect(renderNodeFromDrmEntries(['card0'])).toBeNull();
    expect(renderNodeFromDrmEntries(['renderD128', 'renderD129'])).toBeNull();
  });

  it('toContainerPath only translates the workspace and what lies under it', () => {
    expect(toContainerPath('/ws/a/', '/ws/a')).toBe('/scratch');
    expect(toContainerPath('/ws/a', '/ws/a/b/c')).toBe('/scratch/b/c');
    expect(toContainerPath('/ws/a', '/ws/ab')).toBeNull();
    expect(toContainerPath('/ws/a', 'relative')).toBeNull();
  });

  it('container names stay within Docker’s alphabet whatever the ids', () => {
    expect(rankContainerName('edge/../x', { jobId: 'j 1;rm', attempt: 2, rank: 0 })).toBe(
      'gpunet-edge_.._x-j_1_rm-a2-r0',
    );
  });
});

describe('sandboxContainerOptions: the per-job network sandbox', () => {
  const o = sandboxContainerOptions({ edgeId: 'edge-7', jobId: 'job-1', image: 'gpunet/job-base:torch-cpu' });
  it('holds a network namespace with no network, hardened like a rank', () => {
    expect(o.HostConfig).toMatchObject({
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges:true'],
      ReadonlyRootfs: true,
      Privileged: false,
      Mounts: [],
      PidsLimit: 8,
      DeviceRequests: [],
      Devices: [],
    });
    expect(o.User).toBe(SANDBOX_USER);
    expect(o.Labels).toEqual({
      [LABEL.managed]: 'true',
      [LABEL.edgeId]: 'edge-7',
      [LABEL.role]: 'sandbox',
      [LABEL.jobId]: 'job-1',
    });
  });
});

describe('fuzz: the builder only ever throws RankStartError', () => {
  it('arbitrary launches', () => {
    fc.assert(
      fc.property(
        fc.record({
          workspace: fc.oneof(fc.constant('/ws/a'), fc.string({ maxLength: 20 })),
          workingDir: fc.oneof(fc.constant('/ws/a/x'), fc.string({ maxLength: 20 })),
          gpuUuids: fc.array(fc.oneof(fc.string({ maxLength: 40 }), fc.constant('GPU-1234')), {
            maxLength: 4,
          }),
          gpuVendor: fc.constantFrom('nvidia' as const, 'amd' as const, null),
          memoryBytes: fc.oneof(fc.integer(), fc.double()),
          cpuMillicores: fc.oneof(fc.integer(), fc.double()),
          pids: fc.oneof(fc.integer(), fc.constant(null)),
          env: fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 30 }), { maxKeys: 4 }),
        }),
        (r) => {
          try {
            const o = rankContainerOptions(
              input(
                {},
                {
                  workspace: r.workspace,
                  workingDir: r.workingDir,
                  gpuUuids: r.gpuUuids,
                  gpuVendor: r.gpuVendor,
                  env: r.env,
                  limits: { memoryBytes: r.memoryBytes, cpuMillicores: r.cpuMillicores, pids: r.pids },
                },
              ),
            );
            // Whatever was accepted is still sandboxed.
            expect(o.HostConfig!.CapDrop).toEqual(['ALL']);
            expect(o.HostConfig!.Mounts).toHaveLength(1);
            expect(o.WorkingDir!.startsWith(CONTAINER_SCRATCH)).toBe(true);
          } catch (e) {
            expect(e).toBeInstanceOf(RankStartError);
          }
        },
      ),
      { seed: 20300101, numRuns: 500 },
    );
  });
});

describe('docs/security.md', () => {
  const doc = readFileSync(join(import.meta.dirname, '../../../docs/security.md'), 'utf8');
  // The page must explain every setting the builder makes: a new one cannot slip in undocumented.
  it('names every HostConfig setting of a rank container', () => {
    const keys = Object.keys(rankContainerOptions(input({ ociRuntime: 'runsc' })).HostConfig!);
    expect(keys.filter((k) => !doc.includes(`\`${k}`))).toEqual([]);
  });
});

describe('docs/security.md wiring snippet', () => {
  it('is the line the edge contract test runs', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../../docs/security.md'), 'utf8');
    const test = readFileSync(join(import.meta.dirname, 'docker-edge.contract.spec.ts'), 'utf8');
    const snippet = /## Wiring[\s\S]*?```ts\n([\s\S]*?)\n```/.exec(doc)?.[1]?.trim();
    expect(snippet).toBeDefined();
    expect(test).toContain(snippet);
  });
});
