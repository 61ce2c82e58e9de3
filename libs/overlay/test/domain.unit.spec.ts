import { describe, expect, it } from 'vitest';
import type { EdgePathReport, PeerPath } from '@gpunet/contracts';
import {
  allocateJobNetwork,
  assignHostAddresses,
  buildJobPathReport,
  choosePath,
  classifyNat,
  hostAddress,
  InvalidAddressError,
  OverlayPoolExhaustedError,
  parseCidr,
  rankNetworkEnv,
  rankRelays,
  TokenBucket,
} from '../src';

describe('job networks', () => {
  it.each([
    { name: 'the first /24 of the default pool', used: [], avoid: [], expected: '100.96.0.0/24' },
    {
      name: 'skips networks in use',
      used: ['100.96.0.0/24', '100.96.1.0/24'],
      avoid: [],
      expected: '100.96.2.0/24',
    },
    { name: "skips a host's own LAN", used: [], avoid: ['100.96.0.0/23'], expected: '100.96.2.0/24' },
    { name: 'fills a hole', used: ['100.96.0.0/24', '100.96.2.0/24'], avoid: [], expected: '100.96.1.0/24' },
  ])('allocates $name', ({ used, avoid, expected }) => {
    expect(allocateJobNetwork(used, { avoid })).toBe(expected);
  });

  it('fails when the pool is full, and on a malformed network', () => {
    expect(() => allocateJobNetwork(['10.0.0.0/24'], { pool: '10.0.0.0/24' })).toThrow(
      OverlayPoolExhaustedError,
    );
    expect(() => parseCidr('10.0.0.1/24')).toThrow(InvalidAddressError);
    expect(() => parseCidr('10.0.0.0/33')).toThrow(InvalidAddressError);
    expect(() => parseCidr('300.0.0.0/8')).toThrow(InvalidAddressError);
  });

  it('numbers hosts from .1 in the order given (rank 0 first) and refuses a full network', () => {
    expect(assignHostAddresses('100.96.5.0/24', ['h-b', 'h-a'])).toEqual({
      'h-b': '100.96.5.1',
      'h-a': '100.96.5.2',
    });
    expect(hostAddress('100.96.5.0/24', 253)).toBe('100.96.5.254');
    expect(() => hostAddress('100.96.5.0/24', 254)).toThrow(OverlayPoolExhaustedError);
    expect(() => assignHostAddresses('100.96.5.0/24', ['a', 'a'])).toThrow(InvalidAddressError);
  });
});

describe('relay choice', () => {
  const relays = ['r1', 'r2', 'r3', 'r4'].map((relayId) => ({ relayId }));

  it('gives every edge of a job the same order, whatever order it was told the relays in', () => {
    expect(rankRelays('job-1', relays)).toEqual(rankRelays('job-1', [...relays].reverse()));
  });

  it('spreads jobs over relays and moves only the removed relay’s jobs', () => {
    const jobs = Array.from({ length: 400 }, (_, i) => `job-${i}`);
    const first = jobs.map((j) => rankRelays(j, relays)[0]!.relayId);
    for (const r of ['r1', 'r2', 'r3', 'r4']) expect(first.filter((x) => x === r).length).toBeGreaterThan(50);
    const without = jobs.map(
      (j) =>
        rankRelays(
          j,
          relays.filter((r) => r.relayId !== 'r2'),
        )[0]!.relayId,
    );
    jobs.forEach((_, i) => {
      if (first[i] !== 'r2') expect(without[i]).toBe(first[i]);
    });
  });
});

describe('rankNetworkEnv', () => {
  it('points every framework at the overlay interface and network', () => {
    expect(
      rankNetworkEnv({ networkCidr: '100.96.3.0/24', masterAddr: '100.96.3.1', masterPort: 29500 }),
    ).toEqual({
      MASTER_ADDR: '100.96.3.1',
      MASTER_PORT: '29500',
      GLOO_SOCKET_IFNAME: 'gpunet0',
      TP_SOCKET_IFNAME: 'gpunet0',
      NCCL_SOCKET_IFNAME: '=gpunet0',
      NCCL_SOCKET_FAMILY: 'AF_INET',
      NCCL_IB_DISABLE: '1',
      OMPI_MCA_btl_tcp_if_include: '100.96.3.0/24',
      OMPI_MCA_oob_tcp_if_include: '100.96.3.0/24',
    });
  });
});

describe('TokenBucket', () => {
  it('allows a burst, then the rate', () => {
    const bucket = new TokenBucket(1000, 1500, 0);
    expect(bucket.take(1500, 0)).toBe(true);
    expect(bucket.take(1, 0)).toBe(false);
    expect(bucket.take(500, 500)).toBe(true);
    expect(bucket.take(600, 1000)).toBe(false);
    expect(bucket.take(500, 1000)).toBe(true);
    expect(bucket.take(1500, 10_000)).toBe(true);
  });
});

describe('path selection', () => {
  it.each([
    {
      name: 'the fastest confirmed candidate',
      confirmed: [
        { endpoint: '203.0.113.5:1000', kind: 'reflexive' as const, rttMs: 2 },
        { endpoint: '192.168.1.5:1000', kind: 'host' as const, rttMs: 5 },
      ],
      relay: { rttMs: 1 },
      expected: { path: 'direct', endpoint: '203.0.113.5:1000', rttMs: 2 },
    },
    {
      name: 'a host candidate over a reflexive one within 10 %',
      confirmed: [
        { endpoint: '203.0.113.5:1000', kind: 'reflexive' as const, rttMs: 1.0 },
        { endpoint: '192.168.1.5:1000', kind: 'host' as const, rttMs: 1.05 },
      ],
      relay: null,
      expected: { path: 'direct', endpoint: '192.168.1.5:1000', rttMs: 1.05 },
    },
    {
      name: 'the relay without direct path',
      confirmed: [],
      relay: { rttMs: 3 },
      expected: { path: 'relayed', endpoint: null, rttMs: 3 },
    },
    {
      name: 'unreachable without either',
      confirmed: [],
      relay: null,
      expected: { path: 'unreachable', endpoint: null, rttMs: null },
    },
  ])('chooses $name', ({ confirmed, relay, expected }) => {
    expect(choosePath(confirmed, relay)).toEqual(expected);
  });

  it.each([
    { mapped: [], expected: 'unknown' },
    { mapped: ['192.168.1.2:5000', '192.168.1.2:5000'], expected: 'none' },
    { mapped: ['203.0.113.9:5000', '203.0.113.9:5000'], expected: 'endpoint-independent' },
    { mapped: ['203.0.113.9:5000', '203.0.113.9:6001'], expected: 'endpoint-dependent' },
    { mapped: ['203.0.113.9:5000'], expected: 'unknown' },
  ])('classifies a NAT that mapped $mapped as $expected', ({ mapped, expected }) => {
    expect(classifyNat(mapped, ['192.168.1.2'], 5000)).toBe(expected);
  });
});

describe('buildJobPathReport', () => {
  const key = (c: string) => `${c.repeat(43)}=`;
  const path = (peerAddress: string, kind: PeerPath['path'], extra: Partial<PeerPath> = {}): PeerPath => ({
    peerPublicKey: key('A'),
    peerAddress,
    path: kind,
    endpoint: null,
    relayId: null,
    rttMs: 1,
    throughputBps: 1000,
    txBytes: 0,
    rxBytes: 0,
    lastHandshakeAt: null,
    ...extra,
  });
  const report = (address: string, peers: PeerPath[]): EdgePathReport => ({
    jobId: 'j',
    publicKey: key('B'),
    address,
    natMapping: 'none',
    measuredAt: '2030-01-01T00:00:00.000Z',
    peers,
  });

  it('folds both ends of each pair into one entry, in address order', () => {
    const result = buildJobPathReport(
      'j',
      [
        report('100.96.0.10', [
          path('100.96.0.2', 'direct', { rttMs: 2, throughputBps: 10 }),
          path('100.96.0.3', 'relayed'),
        ]),
        report('100.96.0.2', [
          path('100.96.0.10', 'direct', { rttMs: 1, throughputBps: 20 }),
          path('100.96.0.3', 'direct'),
        ]),
        report('100.96.0.3', [path('100.96.0.10', 'direct'), path('100.96.0.2', 'direct')]),
      ],
      '2030-01-01T00:00:01.000Z',
    );
    expect(result.pairs).toEqual([
      { a: '100.96.0.2', b: '100.96.0.3', path: 'direct', rttMs: 1, aToBBps: 1000, bToABps: 1000 },
      { a: '100.96.0.2', b: '100.96.0.10', path: 'direct', rttMs: 1, aToBBps: 20, bToABps: 10 },
      { a: '100.96.0.3', b: '100.96.0.10', path: 'mixed', rttMs: 1, aToBBps: 1000, bToABps: 1000 },
    ]);
    expect(result).toMatchObject({ direct: 2, relayed: 0, other: 1 });
  });

  it('marks a pair unknown while one end has not reported', () => {
    const result = buildJobPathReport('j', [report('100.96.0.1', [path('100.96.0.2', 'relayed')])], 'now');
    expect(result.pairs).toEqual([
      { a: '100.96.0.1', b: '100.96.0.2', path: 'unknown', rttMs: 1, aToBBps: 1000, bToABps: null },
    ]);
  });
});
