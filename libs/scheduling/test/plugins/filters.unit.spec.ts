import { describe, expect, it } from 'vitest';
import {
  computeCapabilityFilter,
  ComputeCapabilityReason,
  type FilterPlugin,
  gpuModelFilter,
  GpuModelReason,
  livenessFilter,
  LivenessReason,
  locationFilter,
  LocationReason,
  pinnedProviderFilter,
  PinnedProviderReason,
  priceCapFilter,
  PriceCapReason,
  providerPolicyFilter,
  ProviderPolicyReason,
  runtimeVersionFilter,
  RuntimeVersionReason,
  simulatedGpusFilter,
  SimulatedGpusReason,
  subnetFilter,
  SubnetReason,
  tflopsFilter,
  TflopsReason,
  vendorFilter,
  VendorReason,
  verifiedGpusFilter,
  VerifiedGpusReason,
  vramFilter,
  VramReason,
} from '../../src';
import { ctxOf, firstHost, gpu, oneHost, GB } from '../fixtures';
import { expectVerdict, type FilterCase } from './helpers';

const U = 'UnschedulableAndUnresolvable' as const;
const refused = { simulatedGpus: 'refused', verifiedGpus: 'optional', setBy: "subnet 'live'" } as const;
const required = { simulatedGpus: 'allowed', verifiedGpus: 'required', setBy: "subnet 'live'" } as const;
const strict = { ...refused, verifiedGpus: 'required' } as const;

const tables: [FilterPlugin, FilterCase[]][] = [
  [
    livenessFilter,
    [
      { name: 'online provider passes', expect: 'Success' },
      {
        name: 'offline provider is not schedulable now',
        provider: { policy: { liveness: 'offline' } },
        expect: ['Unschedulable', LivenessReason.ProviderNotOnline],
      },
      {
        name: 'draining provider takes no new work',
        provider: { policy: { liveness: 'draining' } },
        expect: ['Unschedulable', LivenessReason.ProviderNotOnline],
      },
    ],
  ],
  [
    pinnedProviderFilter,
    [
      { name: 'no pin: inactive', inactive: true, expect: 'Success' },
      { name: 'pinned to this provider', request: { pinnedProvider: 'p0' }, expect: 'Success' },
      {
        name: 'pinned elsewhere',
        request: { pinnedProvider: 'p9' },
        expect: [U, PinnedProviderReason.NotPinnedProvider],
      },
    ],
  ],
  [
    subnetFilter,
    [
      { name: 'no subnet: any provider', inactive: true, expect: 'Success' },
      {
        name: 'member of the subnet',
        request: { subnet: 'ai' },
        provider: { policy: { subnets: ['public', 'ai'] } },
        expect: 'Success',
      },
      { name: 'not a member', request: { subnet: 'ai' }, expect: [U, SubnetReason.NotInSubnet] },
    ],
  ],
  [
    locationFilter,
    [
      { name: 'no rules: inactive', inactive: true, expect: 'Success' },
      {
        name: 'accepted continent',
        request: { location: { accept: [{ continent: 'EU' }], reject: [] } },
        expect: 'Success',
      },
      {
        name: 'one of several accepted',
        request: { location: { accept: [{ country: 'US' }, { country: 'DE' }], reject: [] } },
        expect: 'Success',
      },
      {
        name: 'every field of an entry must match',
        request: { location: { accept: [{ country: 'DE', city: 'Munich' }], reject: [] } },
        expect: [U, LocationReason.LocationNotAccepted],
      },
      {
        name: 'other continent',
        request: { location: { accept: [{ continent: 'NA' }], reject: [] } },
        expect: [U, LocationReason.LocationNotAccepted],
      },
      {
        name: 'rejected ASN',
        request: { location: { accept: [], reject: [{ asn: 64_500 }] } },
        expect: [U, LocationReason.LocationRejected],
      },
      {
        name: 'reject wins over accept',
        request: { location: { accept: [{ continent: 'EU' }], reject: [{ city: 'Berlin' }] } },
        expect: [U, LocationReason.LocationRejected],
      },
    ],
  ],
  [
    providerPolicyFilter,
    [
      { name: 'no cap, default price', expect: 'Success' },
      {
        name: 'cap covers a node',
        request: { gpusPerNode: { min: 4, max: 8 } },
        provider: { policy: { maxGpusPerJob: 4 } },
        expect: 'Success',
      },
      {
        name: 'cap below the per-node minimum',
        request: { gpusPerNode: { min: 8, max: 8 } },
        provider: { policy: { maxGpusPerJob: 4 } },
        expect: [U, ProviderPolicyReason.PerJobCapTooSmall],
      },
      {
        name: 'cap below one rank',
        request: { gpusPerRank: 2 },
        provider: { policy: { maxGpusPerJob: 1 } },
        expect: [U, ProviderPolicyReason.PerJobCapTooSmall],
      },
      {
        name: 'model priced explicitly',
        provider: { policy: { defaultPricePerGpuHourMinor: null, pricePerGpuHourMinor: { 'A100-80G': 5 } } },
        expect: 'Success',
      },
      {
        name: 'model not offered',
        provider: { policy: { defaultPricePerGpuHourMinor: null, pricePerGpuHourMinor: { 'H100-SXM': 5 } } },
        expect: [U, ProviderPolicyReason.ModelNotOffered],
      },
    ],
  ],
  [
    vendorFilter,
    [
      { name: 'any vendor: inactive', inactive: true, expect: 'Success' },
      { name: 'nvidia asked, nvidia GPU', request: { vendor: 'nvidia' }, expect: 'Success' },
      { name: 'amd asked, nvidia GPU', request: { vendor: 'amd' }, expect: [U, VendorReason.VendorMismatch] },
      { name: 'amd asked, MI300X', request: { vendor: 'amd' }, model: 'MI300X', expect: 'Success' },
    ],
  ],
  [
    gpuModelFilter,
    [
      { name: 'any model: inactive', inactive: true, expect: 'Success' },
      { name: 'listed model', request: { models: ['H100-SXM', 'A100-80G'] }, expect: 'Success' },
      { name: 'case-insensitive', request: { models: ['a100-80g'] }, expect: 'Success' },
      {
        name: 'unlisted model',
        request: { models: ['H100-SXM'] },
        expect: [U, GpuModelReason.ModelNotAccepted],
      },
    ],
  ],
  [
    vramFilter,
    [
      { name: 'no minimum: inactive', inactive: true, expect: 'Success' },
      { name: 'exactly the minimum', request: { minVramBytes: 80 * GB }, expect: 'Success' },
      {
        name: 'one byte short',
        request: { minVramBytes: 80 * GB + 1 },
        expect: [U, VramReason.InsufficientVram],
      },
      {
        name: '24 GB card for a 40 GB job',
        request: { minVramBytes: 40 * GB },
        model: 'RTX-4090',
        expect: [U, VramReason.InsufficientVram],
      },
    ],
  ],
  [
    computeCapabilityFilter,
    [
      { name: 'nothing asked: inactive', inactive: true, expect: 'Success' },
      {
        name: 'same major, higher minor',
        request: { minComputeCapability: { major: 8, minor: 0 } },
        model: 'L40S',
        expect: 'Success',
      },
      {
        name: 'higher major',
        request: { minComputeCapability: { major: 8, minor: 9 } },
        model: 'H100-SXM',
        expect: 'Success',
      },
      {
        name: 'too old',
        request: { minComputeCapability: { major: 8, minor: 0 } },
        model: 'V100-32G',
        expect: [U, ComputeCapabilityReason.ComputeCapabilityTooLow],
      },
      {
        name: 'unknown capability',
        request: { minComputeCapability: { major: 7, minor: 0 } },
        gpu: { computeCapability: null },
        expect: [U, ComputeCapabilityReason.ComputeCapabilityTooLow],
      },
      {
        name: 'capability does not apply to AMD',
        request: { minComputeCapability: { major: 9, minor: 0 } },
        model: 'MI300X',
        expect: 'Success',
      },
      {
        name: 'accepted AMD architecture',
        request: { amdArchitectures: ['gfx942'] },
        model: 'MI300X',
        expect: 'Success',
      },
      {
        name: 'other AMD architecture',
        request: { amdArchitectures: ['gfx942'] },
        model: 'MI250X',
        expect: [U, ComputeCapabilityReason.AmdArchitectureNotAccepted],
      },
    ],
  ],
  [
    runtimeVersionFilter,
    [
      { name: 'no ranges: inactive', inactive: true, expect: 'Success' },
      { name: 'CUDA in range', request: { cudaRange: '>=12.2 <13' }, expect: 'Success' },
      {
        name: 'CUDA too old',
        request: { cudaRange: '>=12.6' },
        expect: [U, RuntimeVersionReason.CudaVersionMismatch],
      },
      {
        name: 'CUDA two-part version is coerced',
        request: { cudaRange: '12.4.x' },
        gpu: { cudaVersion: '12.4' },
        expect: 'Success',
      },
      {
        name: 'CUDA unknown',
        request: { cudaRange: '>=11' },
        gpu: { cudaVersion: null },
        expect: [U, RuntimeVersionReason.CudaVersionMismatch],
      },
      { name: 'CUDA range ignores AMD', request: { cudaRange: '>=13' }, model: 'MI300X', expect: 'Success' },
      { name: 'ROCm in range', request: { rocmRange: '^6.1' }, model: 'MI300X', expect: 'Success' },
      {
        name: 'ROCm out of range',
        request: { rocmRange: '^6.2' },
        model: 'MI300X',
        expect: [U, RuntimeVersionReason.RocmVersionMismatch],
      },
    ],
  ],
  [
    tflopsFilter,
    [
      { name: 'no minimum: inactive', inactive: true, expect: 'Success' },
      { name: 'fast enough', request: { minTflops: { bf16: 300 } }, expect: 'Success' },
      {
        name: 'too slow',
        request: { minTflops: { bf16: 313 } },
        expect: [U, TflopsReason.InsufficientTflops],
      },
      {
        name: 'every named precision must pass',
        request: { minTflops: { bf16: 300, fp8: 1 } },
        expect: [U, TflopsReason.InsufficientTflops],
      },
      {
        name: 'measured below datasheet',
        request: { minTflops: { bf16: 300 } },
        gpu: { tflops: { bf16: 290 } },
        expect: [U, TflopsReason.InsufficientTflops],
      },
    ],
  ],
  [
    priceCapFilter,
    [
      { name: 'no cap: inactive', inactive: true, expect: 'Success' },
      { name: 'at the cap', request: { maxPricePerGpuHourMinor: 1_000_000 }, expect: 'Success' },
      {
        name: 'above the cap',
        request: { maxPricePerGpuHourMinor: 999_999 },
        expect: [U, PriceCapReason.PriceAboveCap],
      },
      {
        name: 'per-model price wins over the default',
        request: { maxPricePerGpuHourMinor: 10 },
        provider: { policy: { pricePerGpuHourMinor: { 'A100-80G': 10 } } },
        expect: 'Success',
      },
    ],
  ],
  [
    simulatedGpusFilter,
    [
      { name: 'allowed: inactive', inactive: true, expect: 'Success' },
      { name: 'refused: a detected GPU passes', request: { trust: refused }, expect: 'Success' },
      {
        name: 'refused: a simulated GPU never serves',
        request: { trust: refused },
        gpu: { simulated: true },
        expect: [U, SimulatedGpusReason.SimulatedRefused],
      },
      {
        name: 'refused: verification `simulated` counts as simulated',
        request: { trust: refused },
        gpu: { verification: 'simulated' },
        expect: [U, SimulatedGpusReason.SimulatedRefused],
      },
    ],
  ],
  [
    verifiedGpusFilter,
    [
      { name: 'optional: inactive', inactive: true, expect: 'Success' },
      {
        name: 'required: verified passes',
        request: { trust: required },
        gpu: { verification: 'verified' },
        expect: 'Success',
      },
      {
        name: 'required: unverified waits',
        request: { trust: required },
        gpu: { verification: 'unverified', verificationNote: 'challenge c-1 failed (late)' },
        expect: ['Unschedulable', VerifiedGpusReason.Unverified],
      },
      {
        name: 'required: pending waits',
        request: { trust: required },
        gpu: { verification: 'pending' },
        expect: ['Unschedulable', VerifiedGpusReason.VerificationPending],
      },
      {
        name: 'required: nothing reported waits',
        request: { trust: required },
        expect: ['Unschedulable', VerifiedGpusReason.VerificationUnknown],
      },
      {
        name: 'required: a simulated GPU is left to simulated-gpus',
        request: { trust: required },
        gpu: { simulated: true },
        expect: 'Success',
      },
      {
        name: 'required and refused: a simulated GPU passes here (simulated-gpus refuses it)',
        request: { trust: strict },
        gpu: { simulated: true, verification: 'simulated' },
        expect: 'Success',
      },
    ],
  ],
];

describe('trust filters say why, naming the rule and the challenge', () => {
  it.each([
    [simulatedGpusFilter, { simulated: true }, "simulated GPUs refused by subnet 'live'"],
    [
      verifiedGpusFilter,
      { verification: 'unverified', verificationNote: 'challenge c-1 failed (late)' },
      "unverified: challenge c-1 failed (late); verified GPUs required by subnet 'live'",
    ],
    [
      verifiedGpusFilter,
      { verification: 'pending' },
      "pending: not challenged yet; verified GPUs required by subnet 'live'",
    ],
  ] as const)('%s: %j', (plugin, g, message) => {
    const snapshot = oneHost([gpu('A100-80G', g)]);
    const { host, provider, gpus } = firstHost(snapshot);
    const predicate = plugin.gpuFilter!(ctxOf(snapshot, { trust: strict }))!;
    expect(predicate(gpus[0]!, host, provider).message).toBe(message);
  });
});

describe.each(tables.map(([plugin, cases]) => [plugin.name, plugin, cases] as const))(
  '%s filter',
  (_name, plugin, cases) => {
    it.each(cases.map((c) => [c.name, c] as const))('%s', (_n, c) => expectVerdict(plugin, c));

    it('describes its requirement only when it applies', () => {
      const ctx = ctxOf(oneHost([gpu()]));
      expect(plugin.describe(ctx)).toBeNull();
    });
  },
);

describe('filter descriptions read as requirements', () => {
  const snapshot = oneHost([gpu()]);
  it.each([
    [vramFilter, { minVramBytes: 40 * GB }, '≥ 40 GB'],
    [vramFilter, { minVramBytes: 80 * 2 ** 30 }, '≥ 80 GiB'],
    [subnetFilter, { subnet: 'ai' }, "in subnet 'ai'"],
    [vendorFilter, { vendor: 'nvidia' as const }, 'nvidia'],
    [gpuModelFilter, { models: ['H100-SXM', 'A100-80G'] }, 'model H100-SXM|A100-80G'],
    [computeCapabilityFilter, { minComputeCapability: { major: 8, minor: 0 } }, 'compute capability ≥ 8.0'],
    [runtimeVersionFilter, { cudaRange: '>=12.2' }, 'CUDA >=12.2'],
    [tflopsFilter, { minTflops: { bf16: 700 } }, '≥ 700 TFLOPS bf16'],
    [priceCapFilter, { maxPricePerGpuHourMinor: 2_500_000 }, '≤ 2500000 per GPU-hour'],
    [
      locationFilter,
      { location: { accept: [{ continent: 'EU' }], reject: [{ asn: 64_512 }] } },
      'in EU, not in AS64512',
    ],
    [pinnedProviderFilter, { pinnedProvider: 'p7' }, "on provider 'p7'"],
    [simulatedGpusFilter, { trust: refused }, 'not simulated'],
    [verifiedGpusFilter, { trust: required }, 'verified'],
  ] as const)('%s: %j → %s', (plugin, request, phrase) => {
    expect(plugin.describe(ctxOf(snapshot, request))).toBe(phrase);
  });
});
