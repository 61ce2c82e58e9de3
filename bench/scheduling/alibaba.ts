import {
  type ClusterSnapshotInput,
  createPrng,
  type GpuInput,
  gangRequest,
  GPU_CATALOG,
  type ProviderInput,
  type SiteInput,
} from '@gpunet/scheduling';
import { NODES_FILE, TASKS_FILE, traceCsv } from '../support/alibaba-trace/trace';
import type { SimTask } from './sim';

/**
 * The Alibaba GPU cluster trace (cluster-trace-gpu-v2023; Weng et al., "Beware of Fragmentation:
 * Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC '23) as a
 * gpunet cluster and task stream. The trace has no VRAM, interconnect or network; assumptions:
 * - one trace node = one provider with one host; GPU figures from the catalog by model (G2/G3
 *   undisclosed: taken as A100-40G-PCIe / A100-80G-SXM class);
 * - one data centre: sites are pods of 32 consecutive nodes (100 Gbit/s, 20 µs LAN); between pods
 *   25 Gbit/s and ~200 µs (coordinates); NICs 100 Gbit/s on 8-GPU nodes, 25 Gbit/s otherwise;
 * - gpunet gives whole GPUs: a task sharing a fraction of a GPU (gpu_milli < 1000) takes one GPU;
 *   CPU-only tasks (num_gpu = 0) are left out;
 * - gpu_spec lists the accepted models ('|'-separated); empty = any model.
 * The trace is read from the folder GPUNET_ALIBABA_TRACE names (bench/support/alibaba-trace/README.md).
 */

const POD = 32;

export const traceCluster = (): ClusterSnapshotInput => {
  const nodes = traceCsv(NODES_FILE);
  const sites: SiteInput[] = [];
  const providers: ProviderInput[] = nodes.map((n, i) => {
    const pod = Math.floor(i / POD);
    if (sites.length <= pod) {
      sites.push({
        id: `pod-${pod}`,
        lanBandwidthBps: 100e9,
        lanRttUs: 20,
        coordinates: { x: (pod % 8) * 60, y: Math.floor(pod / 8) * 60, height: 20 },
      });
    }
    const spec = GPU_CATALOG[n.model!];
    if (spec === undefined) throw new Error(`trace model ${n.model} is not in the catalog`);
    const count = Number(n.gpu);
    const gpus: GpuInput[] = Array.from({ length: count }, (_, g) => ({
      uuid: `${n.sn}-gpu${g}`,
      model: spec.model,
      vendor: spec.vendor,
      vramBytes: spec.vramBytes,
      computeCapability: spec.computeCapability,
      amdArch: null,
      driverVersion: '470.82',
      cudaVersion: '11.4',
      rocmVersion: null,
      tflops: spec.tflops,
      tflopsMeasured: false,
      reservedBy: null,
    }));
    return {
      id: n.sn!,
      location: { continent: 'AS', country: 'CN', city: null, asn: null, isp: null },
      policy: {
        liveness: 'online',
        maxGpusPerJob: null,
        pricePerGpuHourMinor: { [spec.model]: spec.pricePerGpuHourMinor },
        defaultPricePerGpuHourMinor: null,
        subnets: ['public'],
      },
      hosts: [
        {
          id: n.sn!,
          siteId: `pod-${pod}`,
          gpus,
          intraHost: spec.intraHost,
          nicBandwidthBps: count >= 8 ? 100e9 : 25e9,
          coordinates: null,
        },
      ],
    };
  });
  return {
    providers,
    network: { sites, hostLinks: [], siteLinks: [], defaultWanBandwidthBps: 25e9, defaultWanRttUs: 200 },
  };
};

/** gpuspec33's GPU tasks in trace order, at their own creation times and durations (seconds). */
export const traceTasks = (): SimTask[] =>
  traceCsv(TASKS_FILE).flatMap((r) => {
    const n = Number(r.num_gpu);
    if (!(n > 0)) return [];
    const created = Number(r.creation_time);
    const deleted = Number(r.deletion_time);
    const models = (r.gpu_spec ?? '')
      .split('|')
      .map((m) => m.trim())
      .filter((m) => m !== '');
    return [
      {
        id: r.name!,
        arrival: created,
        duration: Math.max(1, deleted - created),
        gang: gangRequest({ name: 'task', gpuCount: n, models: [...new Set(models)], maxNodes: 1 }),
      },
    ];
  });

/**
 * The trace's tasks (order, sizes, model constraints, durations) re-timed for a queueing replay.
 * The trace's own creation times span five months for what is a snapshot of pods: at any
 * compression the cluster stays nearly idle, and one pass asks for only ~1.2× the cluster's GPUs.
 * So the task list is repeated `repeat` times, durations are capped at `capS`, and arrivals are
 * Poisson at `load` × the cluster's GPU-seconds: the replay then reaches a steady state (the
 * simulator measures the second half of the window).
 */
export const retimed = (
  tasks: readonly SimTask[],
  capacityGpus: number,
  load: number,
  capS: number,
  repeat: number,
  seed: number,
): SimTask[] => {
  const rnd = createPrng(seed);
  const ordered = [...tasks].sort((a, b) => a.arrival - b.arrival || (a.id < b.id ? -1 : 1));
  const capped = Array.from({ length: repeat }, (_, r) =>
    ordered.map((t) => ({ ...t, id: `${t.id}#${r}`, duration: Math.min(t.duration, capS) })),
  ).flat();
  const meanWork = capped.reduce((s, t) => s + t.gang.gpuCount * t.duration, 0) / Math.max(1, capped.length);
  const rate = (load * capacityGpus) / meanWork;
  let now = 0;
  return capped.map((t) => {
    now += -Math.log(1 - rnd()) / rate;
    return { ...t, arrival: now };
  });
};
