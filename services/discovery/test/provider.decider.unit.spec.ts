import type { Host, Inventory, PolicySummary } from '@gpunet/contracts';
import { given } from '@gpunet/testing';
import { describe, expect, it } from 'vitest';
import { livenessTransitions } from '../src/domain/liveness';
import {
  type ProviderCommand,
  type ProviderEvent,
  providerDecider,
  ProviderKeyChangedError,
  ProviderNotRegisteredError,
} from '../src/domain/provider.decider';

const ID = `U${'A'.repeat(55)}`;
const T0 = '2030-01-01T00:00:00.000Z';
const T1 = '2030-01-01T00:01:00.000Z';

const host: Host = {
  hostname: 'h',
  os: { platform: 'linux', release: '6.1', distribution: null },
  cpu: { model: 'EPYC', logicalCores: 64, architecture: 'amd64' },
  memoryBytes: 512 * 1024 ** 3,
  diskFreeBytes: 10 ** 12,
  containerRuntimes: [],
  addresses: [],
};
const gpu = (index: number) => ({
  index,
  uuid: `SIM-nvidia-${index}`,
  vendor: 'nvidia' as const,
  model: 'NVIDIA H100 80GB HBM3',
  vramBytes: 80 * 1024 ** 3,
  driverVersion: null,
  cudaVersion: '12.4',
  computeCapability: { major: 9, minor: 0 },
  rocmVersion: null,
  architecture: null,
  pciBusId: null,
  mig: { enabled: false, devices: [] },
});
const inventory = (n: number): Inventory => ({
  simulated: true,
  backends: [{ name: 'simulated', status: 'ok', detail: null }],
  gpus: Array.from({ length: n }, (_, i) => gpu(i)),
  links: [],
});
const policy: PolicySummary = {
  sharedGpuUuids: ['SIM-nvidia-0'],
  maxGpusPerJob: 8,
  maxJobDurationMs: null,
  cpuMillicores: 60_000,
  memoryBytes: 500 * 1024 ** 3,
  images: ['*'],
  pricing: { asset: 'USDC', defaultFloorMinor: null, floors: [] },
  subnets: ['public'],
  availability: null,
  location: { continent: null, country: null, city: null },
};

const register = (
  sequence: number,
  over: Partial<Extract<ProviderCommand, { type: 'Register' }>> = {},
): ProviderCommand => ({
  type: 'Register',
  providerId: ID,
  publicKey: ID,
  sequence,
  at: T0,
  name: 'n',
  agentVersion: '0.1.0',
  host,
  inventory: inventory(2),
  policy,
  ...over,
});
const registered = (sequence = 1): ProviderEvent => ({
  type: 'provider.registered',
  data: {
    providerId: ID,
    sequence,
    publicKey: ID,
    name: 'n',
    agentVersion: '0.1.0',
    at: T0,
    host,
    inventory: inventory(2),
    policy,
  },
});
const online = (at = T0): ProviderEvent => ({ type: 'provider.online', data: { providerId: ID, at } });
const offline = (at = T1): ProviderEvent => ({
  type: 'provider.offline',
  data: { providerId: ID, at, lastSeenAt: T0, reason: 'heartbeat-timeout' },
});

describe('provider decider', () => {
  it('registers a new provider and brings it online', () => {
    given(providerDecider)
      .when(register(1))
      .then([registered(1), online()]);
  });

  it('ignores a repeated or older report', () => {
    given(providerDecider, [registered(5), online()])
      .when(register(5))
      .then([]);
    given(providerDecider, [registered(5), online()])
      .when({ type: 'ReportInventory', providerId: ID, sequence: 4, at: T1, host, inventory: inventory(3) })
      .then([]);
  });

  it('records only what changed when an edge registers again', () => {
    given(providerDecider, [registered(1), online()])
      .when(register(2))
      .then([]);
    given(providerDecider, [registered(1), online()])
      .when(register(2, { inventory: inventory(3), at: T1 }))
      .then([
        {
          type: 'provider.inventory-changed',
          data: { providerId: ID, sequence: 2, at: T1, host, inventory: inventory(3) },
        },
      ]);
    given(providerDecider, [registered(1), online(), offline()])
      .when(register(2, { at: T1 }))
      .then([online(T1)]);
  });

  it('treats free disk space alone as no inventory change', () => {
    given(providerDecider, [registered(1), online()])
      .when({
        type: 'ReportInventory',
        providerId: ID,
        sequence: 2,
        at: T1,
        host: { ...host, diskFreeBytes: 1 },
        inventory: inventory(2),
      })
      .then([]);
  });

  it('records an edge that now runs ranks with another isolation as an inventory change', () => {
    const sandboxed: Host = {
      ...host,
      isolation: {
        level: 'container-userns',
        runtime: 'docker',
        ociRuntime: 'runc',
        userNamespaces: true,
        detail: 'Docker 26.1.5 with runc: container root is an unprivileged host uid (userns-remap)',
      },
    };
    given(providerDecider, [registered(1), online()])
      .when({
        type: 'ReportInventory',
        providerId: ID,
        sequence: 2,
        at: T1,
        host: sandboxed,
        inventory: inventory(2),
      })
      .then([
        {
          type: 'provider.inventory-changed',
          data: { providerId: ID, sequence: 2, at: T1, host: sandboxed, inventory: inventory(2) },
        },
      ]);
  });

  it('applies policy and reservation reports that change something', () => {
    const newPolicy = { ...policy, maxGpusPerJob: 2 };
    given(providerDecider, [registered(1), online()])
      .when({ type: 'ReportPolicy', providerId: ID, sequence: 2, at: T1, policy: newPolicy })
      .then([
        { type: 'provider.policy-changed', data: { providerId: ID, sequence: 2, at: T1, policy: newPolicy } },
      ]);
    const reservation = {
      reservationId: 'r',
      jobId: 'j',
      gpuUuids: ['SIM-nvidia-0'],
      cpuMillicores: 1,
      memoryBytes: 1,
      expiresAt: T1,
    };
    given(providerDecider, [registered(1), online()])
      .when({ type: 'ReportReservations', providerId: ID, sequence: 2, at: T1, reservations: [reservation] })
      .then([
        {
          type: 'provider.reservations-changed',
          data: { providerId: ID, sequence: 2, at: T1, reservations: [reservation] },
        },
      ]);
    given(providerDecider, [registered(1), online()])
      .when({ type: 'ReportReservations', providerId: ID, sequence: 2, at: T1, reservations: [] })
      .then([]);
  });

  it('goes offline and online only across a real change', () => {
    given(providerDecider, [registered(), online()])
      .when({ type: 'MarkOffline', providerId: ID, at: T1, lastSeenAt: T0 })
      .then([offline()]);
    given(providerDecider, [registered(), online(), offline()])
      .when({ type: 'MarkOffline', providerId: ID, at: T1, lastSeenAt: T0 })
      .then([]);
    given(providerDecider, [registered(), online(), offline()])
      .when({ type: 'MarkOnline', providerId: ID, at: T1 })
      .then([online(T1)]);
    given(providerDecider, [registered(), online()])
      .when({ type: 'MarkOnline', providerId: ID, at: T1 })
      .then([]);
  });

  it('deregisters, ignores reports after, and lets the edge rejoin', () => {
    const deregistered: ProviderEvent = {
      type: 'provider.deregistered',
      data: { providerId: ID, sequence: 2, at: T1, reason: 'bye' },
    };
    given(providerDecider, [registered(), online()])
      .when({ type: 'Deregister', providerId: ID, sequence: 2, at: T1, reason: 'bye' })
      .then([deregistered]);
    given(providerDecider, [registered(), online(), deregistered])
      .when({ type: 'MarkOnline', providerId: ID, at: T1 })
      .then([]);
    given(providerDecider, [registered(), online(), deregistered])
      .when(register(3))
      .then([registered(3), online()]);
  });

  it('refuses reports from an unknown provider and a registration under another key', () => {
    given(providerDecider)
      .when({ type: 'ReportPolicy', providerId: ID, sequence: 1, at: T0, policy })
      .thenThrows(ProviderNotRegisteredError);
    given(providerDecider, [registered(), online()])
      .when(register(2, { publicKey: `U${'B'.repeat(55)}` }))
      .thenThrows(ProviderKeyChangedError);
  });
});

describe('livenessTransitions', () => {
  const W = 30_000;
  it.each([
    ['silent longer than the window → offline', 'online', 0, 30_001, ['offline']],
    ['silent exactly the window → still online', 'online', 0, 30_000, []],
    ['never heard → offline', 'online', null, 30_001, ['offline']],
    ['heard within the window → back online', 'offline', 10_000, 30_000, ['online']],
    ['offline and still silent → nothing', 'offline', 0, 60_000, []],
  ] as const)('%s', (_name, status, seen, now, expected) => {
    const t = livenessTransitions([{ providerId: 'p', status, lastSeenAtMs: seen }], now, W);
    expect([...t.goOffline.map(() => 'offline'), ...t.goOnline.map(() => 'online')]).toEqual(expected);
  });

  it('takes nobody offline for silence discovery could not have heard', () => {
    // Discovery reconnected to NATS at 50 s: before 80 s, silence proves nothing.
    const rows = [{ providerId: 'p', status: 'online' as const, lastSeenAtMs: 0 }];
    expect(livenessTransitions(rows, 79_000, W, 50_000).goOffline).toEqual([]);
    expect(livenessTransitions(rows, 80_001, W, 50_000).goOffline).toEqual([
      { providerId: 'p', lastSeenAtMs: 0 },
    ]);
  });
});
