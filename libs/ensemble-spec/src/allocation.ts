import semver from 'semver';
import type { Collector } from './collector';
import { FIELD_LIMITS } from './limits';
import { isReservedEnv } from './reserved-env';
import { normalizeLocation } from './location';
import type {
  Allocation,
  ComputeCapability,
  Distributed,
  Execution,
  FailureRecovery,
  GpuRequirement,
  Interconnect,
  IntRange,
  MinTflops,
  Port,
  Resources,
} from './normalized.schema';
import { type AllocationSourceSpec, PRECISIONS } from './source.schema';
import {
  formatDurationMs,
  parseBandwidth,
  parseCores,
  parseDurationMs,
  parseDurationUs,
  parseSize,
  type UnitResult,
} from './units';

type P = readonly PropertyKey[];

/** Unit parse with the error recorded at `path`; `undefined` on failure. */
const unit = <T>(r: UnitResult<T>, path: P, c: Collector): T | undefined => {
  if (r.ok) return r.value;
  c.error(path, /too large|too long|at most/.test(r.reason) ? 'OUT_OF_RANGE' : 'INVALID_VALUE', r.reason);
  return undefined;
};

const positive = (v: number | undefined, path: P, c: Collector, what: string): number | undefined => {
  if (v === undefined) return undefined;
  if (v <= 0) {
    c.error(path, 'OUT_OF_RANGE', `${what} must be greater than 0`);
    return undefined;
  }
  return v;
};

const canonicalModel = (m: string): string => m.trim().replace(/\s+/g, ' ').toUpperCase();

const parseComputeCapability = (v: string | number, path: P, c: Collector): ComputeCapability | undefined => {
  const text = typeof v === 'number' ? (Number.isInteger(v) ? `${v}.0` : String(v)) : v;
  const m = /^([1-9][0-9]?)\.([0-9])$/.exec(text);
  if (!m) {
    c.error(
      path,
      'INVALID_VALUE',
      `compute capability ${JSON.stringify(v)} must look like "8.6" (major.minor)`,
    );
    return undefined;
  }
  return { major: Number(m[1]), minor: Number(m[2]) };
};

const normalizeGpus = (
  src: NonNullable<AllocationSourceSpec['resources']['gpus']>,
  path: P,
  c: Collector,
): GpuRequirement | undefined => {
  const before = c.errors.length;
  const vendor = src.vendor;
  const conflict = (field: string, needs: string): void =>
    c.error([...path, field], 'CONFLICT', `${field} applies to ${needs} GPUs, but vendor is ${vendor}`);
  if (vendor === 'amd' && src.min_compute_capability !== undefined)
    conflict('min_compute_capability', 'NVIDIA');
  if (vendor === 'amd' && src.cuda !== undefined) conflict('cuda', 'NVIDIA');
  if (vendor === 'nvidia' && src.amd_architectures !== undefined) conflict('amd_architectures', 'AMD');
  if (vendor === 'nvidia' && src.rocm !== undefined) conflict('rocm', 'AMD');

  const models = new Set<string>();
  (src.models ?? []).forEach((m, i) => {
    const canon = canonicalModel(m);
    if (canon === '') c.error([...path, 'models', i], 'INVALID_VALUE', 'a model name must not be blank');
    else models.add(canon);
  });
  if (src.mixed_models && models.size === 1) {
    c.warn([...path, 'mixed_models'], 'mixed_models has no effect with a single accepted model');
  }
  const minVram =
    src.min_vram === undefined
      ? 0
      : unit(parseSize(src.min_vram, FIELD_LIMITS.maxVramBytes), [...path, 'min_vram'], c);
  const cc =
    src.min_compute_capability === undefined
      ? null
      : parseComputeCapability(src.min_compute_capability, [...path, 'min_compute_capability'], c);
  const minTflops = Object.fromEntries(PRECISIONS.map((p) => [p, src.min_tflops?.[p] ?? null])) as MinTflops;
  if (c.errors.length > before) return undefined;
  return {
    count: src.count,
    vendor,
    models: [...models].sort(),
    minVramBytes: minVram!,
    minComputeCapability: cc ?? null,
    amdArchitectures: [...new Set(src.amd_architectures ?? [])].sort(),
    cuda: src.cuda === undefined ? null : semver.validRange(src.cuda),
    rocm: src.rocm === undefined ? null : semver.validRange(src.rocm),
    minTflops,
    mixedModels: src.mixed_models,
  };
};

const normalizeResources = (
  src: AllocationSourceSpec['resources'],
  path: P,
  c: Collector,
): Resources | undefined => {
  const before = c.errors.length;
  const cpu = unit(parseCores(src.cpu.cores), [...path, 'cpu', 'cores'], c);
  const ram = positive(
    unit(parseSize(src.ram.size, FIELD_LIMITS.maxRamBytes), [...path, 'ram', 'size'], c),
    [...path, 'ram', 'size'],
    c,
    'ram',
  );
  const disk =
    src.disk === undefined
      ? 0
      : unit(parseSize(src.disk.size, FIELD_LIMITS.maxDiskBytes), [...path, 'disk', 'size'], c);
  if (src.disk !== undefined)
    c.error(
      [...path, 'disk'],
      'NOT_SUPPORTED',
      "not honoured yet: no placement checks a provider's disk, and a rank's workspace is the size the provider's policy gives (disk.workspace_per_rank); omit disk",
    );
  const gpus = src.gpus === undefined ? null : normalizeGpus(src.gpus, [...path, 'gpus'], c);
  if (cpu === 0) c.error([...path, 'cpu', 'cores'], 'OUT_OF_RANGE', 'cores must be at least 0.001');
  if (c.errors.length > before) return undefined;
  return {
    cpuMillicores: cpu!,
    cpuArchitecture: src.cpu.architecture ?? null,
    ramBytes: ram!,
    diskBytes: disk!,
    gpus: gpus ?? null,
  };
};

const normalizeExecution = (src: AllocationSourceSpec, path: P, c: Collector): Execution | undefined => {
  const before = c.errors.length;
  const ex = src.execution;
  const ePath = [...path, 'execution'];
  if (src.executor === 'docker' && ex.image === undefined) {
    c.error(
      [...ePath, 'image'],
      'MISSING_FIELD',
      "missing required field 'image' (the docker executor runs an image)",
    );
  }
  if (src.executor === 'process' && ex.image !== undefined) {
    c.error(
      [...ePath, 'image'],
      'CONFLICT',
      'the process executor runs cmd directly; remove image or use executor: docker',
    );
  }
  if (src.executor === 'process' && (ex.cmd === undefined || ex.cmd.length === 0)) {
    c.error([...ePath, 'cmd'], 'MISSING_FIELD', 'the process executor needs a cmd to run');
  }
  if (src.executor === 'docker' && ex.working_dir !== undefined && !ex.working_dir.startsWith('/')) {
    c.error(
      [...ePath, 'working_dir'],
      'INVALID_VALUE',
      `working_dir '${ex.working_dir}' must be an absolute path in a container`,
    );
  }
  const env: Record<string, string> = {};
  const names = Object.keys(ex.env ?? {}).sort();
  if (names.length > FIELD_LIMITS.maxEnvVars) {
    c.error([...ePath, 'env'], 'LIMIT_EXCEEDED', `at most ${FIELD_LIMITS.maxEnvVars} environment variables`);
  }
  for (const name of names) env[name] = ex.env![name]!;
  if (c.errors.length > before) return undefined;
  return {
    image: ex.image ?? null,
    cmd: ex.cmd ?? [],
    entrypoint: ex.entrypoint ?? null,
    env,
    workingDir: ex.working_dir ?? null,
  };
};

const normalizePorts = (src: AllocationSourceSpec['ports'], path: P, c: Collector): Port[] => {
  const ports: Port[] = [];
  const seenPrivate = new Set<string>();
  const seenPublic = new Set<string>();
  (src ?? []).forEach((p, i) => {
    const privateKey = `${p.protocol}/${p.private}`;
    if (seenPrivate.has(privateKey)) {
      c.error([...path, i, 'private'], 'DUPLICATE', `${p.protocol} port ${p.private} is listed twice`);
    }
    seenPrivate.add(privateKey);
    if (p.public !== undefined) {
      const publicKey = `${p.protocol}/${p.public}`;
      if (seenPublic.has(publicKey)) {
        c.error([...path, i, 'public'], 'DUPLICATE', `public ${p.protocol} port ${p.public} is listed twice`);
      }
      seenPublic.add(publicKey);
      c.error(
        [...path, i, 'public'],
        'NOT_SUPPORTED',
        `not honoured yet: no port is published outside the job network, so public ${p.public} would reach nothing; omit public (the allocation's ranks reach port ${p.private} on the job network)`,
      );
    }
    ports.push({ private: p.private, public: p.public ?? null, protocol: p.protocol });
  });
  return ports.sort((a, b) =>
    a.protocol === b.protocol ? a.private - b.private : a.protocol < b.protocol ? -1 : 1,
  );
};

const normalizeInterconnect = (
  src: NonNullable<AllocationSourceSpec['distributed']>['interconnect'],
  path: P,
  c: Collector,
): Interconnect | undefined => {
  if (src === undefined) return { minBandwidthBps: null, maxRttUs: null, sameSite: false };
  const before = c.errors.length;
  const bw =
    src.min_bandwidth === undefined
      ? null
      : positive(
          unit(
            parseBandwidth(src.min_bandwidth, FIELD_LIMITS.maxBandwidthBps),
            [...path, 'min_bandwidth'],
            c,
          ),
          [...path, 'min_bandwidth'],
          c,
          'min_bandwidth',
        );
  const rtt =
    src.max_rtt === undefined
      ? null
      : positive(
          unit(parseDurationUs(src.max_rtt, FIELD_LIMITS.maxRttUs), [...path, 'max_rtt'], c),
          [...path, 'max_rtt'],
          c,
          'max_rtt',
        );
  if (c.errors.length > before) return undefined;
  return { minBandwidthBps: bw ?? null, maxRttUs: rtt ?? null, sameSite: src.same_site };
};

const ceilDiv = (a: number, b: number): number => Math.ceil(a / b);

const normalizeDistributed = (
  src: AllocationSourceSpec,
  gpus: GpuRequirement | null,
  ports: readonly Port[],
  path: P,
  c: Collector,
): { ranks: number; distributed: Distributed | null } | undefined => {
  const d = src.distributed;
  if (d === undefined) return { ranks: 1, distributed: null };
  const before = c.errors.length;
  const dPath = [...path, 'distributed'];
  const gpusPath = [...path, 'resources', 'gpus'];

  if (gpus === null && d.gpus_per_rank !== undefined) {
    c.error([...dPath, 'gpus_per_rank'], 'CONFLICT', 'gpus_per_rank needs resources.gpus');
  }
  if (gpus === null && d.gpus_per_node !== undefined) {
    c.error(
      [...dPath, 'gpus_per_node'],
      'CONFLICT',
      'gpus_per_node needs resources.gpus; use ranks_per_node for a CPU-only gang',
    );
  }
  if (d.gpus_per_node !== undefined && d.ranks_per_node !== undefined) {
    c.error([...dPath, 'ranks_per_node'], 'CONFLICT', 'give gpus_per_node or ranks_per_node, not both');
  }
  if (d.framework === 'nccl' && gpus === null) {
    c.error(
      [...dPath, 'framework'],
      'CONFLICT',
      'nccl needs GPUs; a CPU-only gang uses torchrun (Gloo) or custom',
    );
  }
  if (d.framework === 'nccl' && gpus?.vendor === 'amd') {
    c.error(
      [...dPath, 'framework'],
      'CONFLICT',
      'NCCL is NVIDIA-only; AMD gangs use torchrun or custom (RCCL)',
    );
  }

  const gpusPerRank = gpus === null ? 0 : (d.gpus_per_rank ?? 1);
  let ranks: number;
  if (gpus !== null) {
    if (gpus.count % gpusPerRank !== 0) {
      c.error(
        [...gpusPath, 'count'],
        'INVALID_VALUE',
        `count ${gpus.count} is not a multiple of gpus_per_rank ${gpusPerRank}`,
      );
      return undefined;
    }
    ranks = gpus.count / gpusPerRank;
    if (d.ranks !== undefined && d.ranks !== ranks) {
      c.error(
        [...dPath, 'ranks'],
        'CONFLICT',
        `ranks ${d.ranks} contradicts count ${gpus.count} / gpus_per_rank ${gpusPerRank} = ${ranks}; omit ranks`,
      );
    }
  } else if (d.ranks === undefined) {
    c.error(
      [...dPath, 'ranks'],
      'MISSING_FIELD',
      'a CPU-only gang needs ranks (there is no GPU count to derive it from)',
    );
    return undefined;
  } else {
    ranks = d.ranks;
  }

  // Per-node bounds, in ranks; given in GPUs they must be whole ranks.
  let rpnMin = 1;
  let rpnMax = ranks;
  let perNodePath: P = [...dPath, 'ranks_per_node'];
  if (d.gpus_per_node !== undefined && gpus !== null) {
    perNodePath = [...dPath, 'gpus_per_node'];
    for (const bound of ['min', 'max'] as const) {
      const v = d.gpus_per_node[bound];
      if (v !== undefined && v % gpusPerRank !== 0) {
        c.error(
          [...perNodePath, bound],
          'INVALID_VALUE',
          `gpus_per_node.${bound} ${v} is not a multiple of gpus_per_rank ${gpusPerRank}`,
        );
      }
    }
    rpnMin = d.gpus_per_node.min === undefined ? 1 : Math.floor(d.gpus_per_node.min / gpusPerRank);
    rpnMax = d.gpus_per_node.max === undefined ? ranks : Math.floor(d.gpus_per_node.max / gpusPerRank);
  } else if (d.ranks_per_node !== undefined) {
    rpnMin = d.ranks_per_node.min ?? 1;
    rpnMax = d.ranks_per_node.max ?? ranks;
  }
  const unitName = gpus === null ? 'ranks' : 'GPUs';
  const perRank = gpus === null ? 1 : gpusPerRank;
  if (rpnMin > rpnMax) {
    c.error(
      [...perNodePath, 'min'],
      'INVALID_VALUE',
      `min ${rpnMin * perRank} is greater than max ${rpnMax * perRank}`,
    );
  }
  if (rpnMin > ranks) {
    c.error(
      [...perNodePath, 'min'],
      'UNSATISFIABLE',
      `at least ${rpnMin * perRank} ${unitName} per node, but the allocation has only ${ranks * perRank}`,
    );
  }
  rpnMax = Math.min(rpnMax, ranks);
  if (c.errors.length > before) return undefined;

  const widest = Math.max(1, Math.floor(ranks / rpnMin));
  let maxNodes = d.max_nodes ?? widest;
  if (d.max_nodes !== undefined && d.max_nodes > widest) {
    c.warn(
      [...dPath, 'max_nodes'],
      `max_nodes ${d.max_nodes} can never be used: ${ranks * perRank} ${unitName} at ≥ ${rpnMin * perRank} per node fit on at most ${widest}; read as ${widest}`,
    );
    maxNodes = widest;
  }
  if (rpnMax * maxNodes < ranks) {
    c.error(
      [...dPath, d.max_nodes === undefined ? (perNodePath.at(-1) as string) : 'max_nodes'],
      'UNSATISFIABLE',
      `${ranks * perRank} ${unitName} cannot fit: at most ${maxNodes} node${maxNodes === 1 ? '' : 's'} × ${rpnMax * perRank} ${unitName} per node = ${rpnMax * perRank * maxNodes}`,
    );
  }
  if (d.placement === 'spread' && maxNodes === 1) {
    c.error(
      [...dPath, 'placement'],
      'CONFLICT',
      ranks === 1 ? 'spread needs more than one rank' : 'spread needs max_nodes above 1',
    );
  }
  const interconnect = normalizeInterconnect(d.interconnect, [...dPath, 'interconnect'], c);
  if (d.interconnect !== undefined && maxNodes === 1) {
    c.warn([...dPath, 'interconnect'], 'interconnect is ignored: the gang runs on one node (max_nodes 1)');
  }
  if (ports.some((p) => p.protocol === 'tcp' && p.private === d.rendezvous_port)) {
    c.error(
      [...dPath, 'rendezvous_port'],
      'CONFLICT',
      `rendezvous_port ${d.rendezvous_port} is also declared in ports`,
    );
  }
  const publicPort = ports.find((p) => p.public !== null);
  if (publicPort && rpnMax > 1) {
    c.error(
      [...path, 'ports'],
      'CONFLICT',
      `public port ${publicPort.public} cannot be shared by several ranks on one node — set ${gpus === null ? 'ranks_per_node.max: 1' : `gpus_per_node.max: ${gpusPerRank}`} or drop public`,
    );
  }
  if (c.errors.length > before || interconnect === undefined) return undefined;
  const ranksPerNode: IntRange = { min: rpnMin, max: rpnMax };
  return {
    ranks,
    distributed: {
      framework: d.framework,
      gpusPerRank,
      ranksPerNode,
      gpusPerNode: gpus === null ? null : { min: rpnMin * gpusPerRank, max: rpnMax * gpusPerRank },
      maxNodes,
      placement: d.placement,
      interconnect,
      rendezvousPort: d.rendezvous_port,
    },
  };
};

const normalizeFailureRecovery = (
  src: AllocationSourceSpec,
  distributed: Distributed | null,
  env: Record<string, string> | undefined,
  path: P,
  c: Collector,
): FailureRecovery | undefined => {
  const before = c.errors.length;
  const fr = src.failure_recovery;
  const fPath = [...path, 'failure_recovery'];
  const gang = distributed !== null && distributed.framework !== 'custom';
  const strategy =
    fr?.strategy ?? (src.type === 'service' ? (gang ? 'restart_all' : 'restart_failed') : 'stay_down');
  const maxRestarts = fr?.max_restarts ?? (strategy === 'stay_down' ? 0 : 3);
  if (strategy === 'stay_down' && maxRestarts > 0) {
    c.error(
      [...fPath, 'max_restarts'],
      'CONFLICT',
      'stay_down never restarts; set strategy: restart_all or restart_failed',
    );
  }
  if (strategy !== 'stay_down' && maxRestarts === 0) {
    c.error(
      [...fPath, 'max_restarts'],
      'CONFLICT',
      'max_restarts 0 never restarts; write strategy: stay_down instead',
    );
  }
  if (strategy === 'restart_failed' && gang) {
    c.error(
      [...fPath, 'strategy'],
      'CONFLICT',
      `a ${distributed.framework} gang cannot restart one rank alone — use restart_all`,
    );
  }
  const replace = fr?.replace_failed_node ?? false;
  if (replace && strategy === 'stay_down') {
    c.error([...fPath, 'replace_failed_node'], 'CONFLICT', 'replace_failed_node needs a restart strategy');
  } else if (replace) {
    c.error(
      [...fPath, 'replace_failed_node'],
      'NOT_SUPPORTED',
      'not honoured yet: a restart relaunches the ranks on the nodes the job was placed on, never on new ones; omit it (or set false)',
    );
  }
  let elastic: FailureRecovery['elastic'] = null;
  if (fr?.elastic !== undefined) {
    const ePath = [...fPath, 'elastic'];
    c.error(
      ePath,
      'NOT_SUPPORTED',
      'not honoured yet: a restart relaunches the whole gang at its placed size, never on fewer nodes; omit elastic',
    );
    if (distributed === null) {
      c.error(ePath, 'CONFLICT', 'elastic needs a distributed allocation');
    } else {
      if (!['torchrun', 'horovod', 'custom'].includes(distributed.framework)) {
        c.error(
          ePath,
          'CONFLICT',
          `${distributed.framework} cannot change its membership; elastic needs torchrun, horovod or custom`,
        );
      }
      if (strategy !== 'restart_all') {
        c.error(
          [...fPath, 'strategy'],
          'CONFLICT',
          'elastic restarts the gang on fewer nodes; it needs strategy: restart_all',
        );
      }
      const max = fr.elastic.max_nodes ?? distributed.maxNodes;
      if (fr.elastic.min_nodes > max) {
        c.error(
          [...ePath, 'min_nodes'],
          'INVALID_VALUE',
          `min_nodes ${fr.elastic.min_nodes} is greater than max_nodes ${max}`,
        );
      }
      if (max > distributed.maxNodes) {
        c.error(
          [...ePath, 'max_nodes'],
          'CONFLICT',
          `elastic max_nodes ${max} exceeds distributed.max_nodes ${distributed.maxNodes}`,
        );
      }
      elastic = { minNodes: fr.elastic.min_nodes, maxNodes: max };
    }
  }
  const checkpointEnv = fr?.checkpoint_env ?? null;
  if (checkpointEnv !== null) {
    c.error(
      [...fPath, 'checkpoint_env'],
      'NOT_SUPPORTED',
      'not honoured yet: gpunet neither sets a checkpoint directory nor keeps checkpoints across restarts; omit it and write checkpoints where the job itself can reach them',
    );
    if (isReservedEnv(checkpointEnv)) {
      c.error(
        [...fPath, 'checkpoint_env'],
        'CONFLICT',
        `${checkpointEnv} is set by gpunet for other purposes`,
      );
    } else if (env !== undefined && checkpointEnv in env) {
      c.error(
        [...fPath, 'checkpoint_env'],
        'CONFLICT',
        `${checkpointEnv} is also set in execution.env; gpunet sets it`,
      );
    }
  }
  if (c.errors.length > before) return undefined;
  let progressTimeoutMs: number | null = null;
  if (fr?.progress_timeout !== undefined) {
    const pPath = [...fPath, 'progress_timeout'];
    const ms = unit(parseDurationMs(fr.progress_timeout, FIELD_LIMITS.maxDurationMs), pPath, c);
    if (ms !== undefined && ms < FIELD_LIMITS.minProgressTimeoutMs)
      c.error(pPath, 'OUT_OF_RANGE', `progress_timeout must be at least 1s, got ${fr.progress_timeout}`);
    else if (ms !== undefined) progressTimeoutMs = ms;
  }
  return { strategy, maxRestarts, replaceFailedNode: replace, elastic, checkpointEnv, progressTimeoutMs };
};

/**
 * One allocation in normalized form, with every single-allocation rule checked. `undefined` when an
 * error was recorded (errors go to `c`, all of them, not just the first).
 */
export const normalizeAllocation = (
  name: string,
  src: AllocationSourceSpec,
  ensembleMaxDurationMs: number | undefined,
  c: Collector,
): Allocation | undefined => {
  const path: P = ['allocations', name];
  const before = c.errors.length;
  const execution = normalizeExecution(src, path, c);
  const resources = normalizeResources(src.resources, [...path, 'resources'], c);
  const ports = normalizePorts(src.ports, [...path, 'ports'], c);
  const shape =
    resources === undefined ? undefined : normalizeDistributed(src, resources.gpus, ports, path, c);
  const failureRecovery =
    shape === undefined
      ? undefined
      : normalizeFailureRecovery(src, shape.distributed, execution?.env, path, c);
  const location = normalizeLocation(src.location, [...path, 'location'], c);
  if (src.dns_name !== undefined)
    c.error(
      [...path, 'dns_name'],
      'NOT_SUPPORTED',
      'not honoured yet: the job network has no DNS, ranks reach each other by address (MASTER_ADDR, the hostfile); omit dns_name',
    );

  let maxDurationMs = ensembleMaxDurationMs;
  if (src.max_duration !== undefined) {
    const own = positive(
      unit(parseDurationMs(src.max_duration, FIELD_LIMITS.maxDurationMs), [...path, 'max_duration'], c),
      [...path, 'max_duration'],
      c,
      'max_duration',
    );
    if (own !== undefined && ensembleMaxDurationMs !== undefined && own > ensembleMaxDurationMs) {
      c.error(
        [...path, 'max_duration'],
        'CONFLICT',
        `max_duration ${src.max_duration} exceeds the ensemble's max_duration ${formatDurationMs(ensembleMaxDurationMs)}`,
      );
    }
    maxDurationMs = own;
  }
  if (
    c.errors.length > before ||
    execution === undefined ||
    resources === undefined ||
    shape === undefined ||
    failureRecovery === undefined ||
    maxDurationMs === undefined
  ) {
    return undefined;
  }
  return {
    name,
    type: src.type,
    executor: src.executor,
    execution,
    resources,
    ranks: shape.ranks,
    distributed: shape.distributed,
    failureRecovery,
    maxDurationMs,
    dnsName: src.dns_name ?? name,
    ports,
    location,
  };
};

/** Fewest nodes the allocation can run on (1 unless distributed). */
export const minNodes = (a: Allocation): number =>
  a.distributed === null ? 1 : ceilDiv(a.ranks, a.distributed.ranksPerNode.max);
