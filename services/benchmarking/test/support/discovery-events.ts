import {
  DiscoveryStream,
  type Gpu,
  type InputOf,
  type MessageDefinition,
  type ProviderRegistered,
  type ProviderReservationsChanged,
} from '@gpunet/contracts';
import type { JetStreamClient } from '@nats-io/jetstream';
import { publishEvent } from './publish-event';

/** A GPU as discovery reports it (a simulated edge's declared one). */
export const simulatedGpu = (index: number, model: string, vramBytes: number): Gpu => ({
  index,
  uuid: `SIM-nvidia-${index}`,
  vendor: 'nvidia',
  model,
  vramBytes,
  driverVersion: null,
  cudaVersion: null,
  computeCapability: null,
  rocmVersion: null,
  architecture: null,
  pciBusId: null,
  mig: { enabled: false, devices: [] },
});

/** `provider.registered` as discovery publishes it. */
export const registered = (
  providerId: string,
  options: { name: string; address: string; gpus: Gpu[]; simulated: boolean; at: string; sequence?: number },
): InputOf<typeof ProviderRegistered> => ({
  providerId,
  sequence: options.sequence ?? 1,
  publicKey: providerId,
  name: options.name,
  agentVersion: '0.1.0',
  at: options.at,
  host: {
    hostname: options.name,
    os: { platform: 'linux', release: '6.1', distribution: 'Debian 12' },
    cpu: { model: 'test cpu', logicalCores: 2, architecture: 'amd64' },
    memoryBytes: 8 * 1024 ** 3,
    diskFreeBytes: 100 * 1024 ** 3,
    containerRuntimes: [],
    addresses: [{ interface: 'lo', address: options.address, family: 'ipv4' }],
  },
  inventory: {
    simulated: options.simulated,
    backends: [{ name: options.simulated ? 'simulated' : 'nvidia', status: 'ok', detail: null }],
    gpus: options.gpus,
    links: [],
  },
  policy: {
    sharedGpuUuids: options.gpus.map((g) => g.uuid),
    maxGpusPerJob: 8,
    maxJobDurationMs: null,
    cpuMillicores: 1000,
    memoryBytes: 1024 ** 3,
    images: ['*'],
    pricing: { asset: 'USDC', defaultFloorMinor: null, floors: [] },
    subnets: ['public'],
    availability: null,
    location: { continent: 'EU', country: 'DE', city: null },
  },
});

export const reservationsChanged = (
  providerId: string,
  reservations: number,
  at: string,
  sequence: number,
): InputOf<typeof ProviderReservationsChanged> => ({
  providerId,
  sequence,
  at,
  reservations: Array.from({ length: reservations }, (_, i) => ({
    reservationId: `res-${i}`,
    jobId: `job-${i}`,
    gpuUuids: ['SIM-nvidia-0'],
    cpuMillicores: 0,
    memoryBytes: 0,
    expiresAt: '2031-01-01T00:00:00.000Z',
  })),
});

/** Publishes an event on discovery's stream, as discovery's outbox relay would. */
export const publishDiscoveryEvent = async <D extends MessageDefinition>(
  js: JetStreamClient,
  prefix: string,
  def: D,
  data: InputOf<D>,
): Promise<void> => {
  if (def.stream !== DiscoveryStream.name) throw new Error(`${def.type} is not a discovery event`);
  await publishEvent(js, prefix, def, data, `provider-${(data as { providerId: string }).providerId}`);
};
