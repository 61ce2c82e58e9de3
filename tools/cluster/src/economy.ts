import { SubnetEconomicsQuery } from '@gpunet/contracts';
import { askQuery } from '@gpunet/eventing';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import {
  depositOnSimulatedChain,
  requestSubnet,
  requestSubnetJoin,
  type SubnetParameters,
} from './dev-cluster';

/** The economy a development cluster starts with (all amounts in minor units of `asset`). */
export interface DevEconomy {
  readonly subnetId: string;
  readonly asset: string;
  /** The subnet's GPU class and fixed price per GPU-hour. */
  readonly gpuClass: string;
  readonly pricePerGpuHour: bigint;
  readonly tenantId: string;
  readonly tenantDeposit: bigint;
  readonly providerIds: readonly string[];
  /** The subnet's parameters. Default `devSubnetParameters(gpuClass, pricePerGpuHour)`. */
  readonly parameters?: SubnetParameters;
}

/**
 * A subnet with a fixed price for one GPU class, open membership, 5 % subnet fee, per-second billing.
 * Its providers are simulated edges running the process runtime, so it allows simulated GPUs and
 * host-process edges (`minimumIsolation: host-process`) — which settlement accepts only because
 * the cluster's asset is a test asset (`DEV_SETTLEMENT_ENV`). Verified GPUs stay required:
 * that rule governs GPUs that are not simulated (a real edge joining the cluster is placed once its
 * challenge passes); simulated GPUs are governed by `simulatedGpus` alone.
 */
export const devSubnetParameters = (gpuClass: string, pricePerGpuHour: bigint): SubnetParameters => ({
  gpuClasses: [gpuClass],
  pricing: { mode: 'fixed', pricePerGpuHour: { [gpuClass]: pricePerGpuHour.toString() } },
  billingIncrementSeconds: 1,
  minimumChargeSeconds: 0,
  subnetFeeBps: 500,
  providerMinStake: '1000',
  slashing: { 'host-lost': 1_000 },
  unbondingSeconds: 60,
  membership: { mode: 'open' },
  trust: {
    simulatedGpus: 'allowed',
    verifiedGpus: 'required',
    spotChecksPerGpuHour: 1,
    minimumIsolation: 'host-process',
  },
});

const OWNER = 'subnet-owner';
/** Settlement's default minimum stake to create a subnet (1 000 NTX). */
const OWNER_STAKE = 1_000_000_000n;

/**
 * Money on the simulated chain for the tenant, the subnet owner and every provider; the subnet
 * created and every provider in it (staked). Resolves once settlement shows all of it.
 */
export const openDevEconomy = async (
  nc: NatsConnection,
  prefix: string,
  e: DevEconomy,
  timeoutMs = 60_000,
): Promise<void> => {
  const js = jetstream(nc);
  await depositOnSimulatedChain(nc, prefix, e.tenantId, e.asset, e.tenantDeposit);
  await depositOnSimulatedChain(nc, prefix, OWNER, e.asset, OWNER_STAKE * 2n);
  await requestSubnet(js, prefix, {
    subnetId: e.subnetId,
    ownerId: OWNER,
    asset: e.asset,
    stake: OWNER_STAKE,
    parameters: e.parameters ?? devSubnetParameters(e.gpuClass, e.pricePerGpuHour),
  });
  for (const providerId of e.providerIds) {
    await depositOnSimulatedChain(nc, prefix, providerId, e.asset, 10_000n);
    await requestSubnetJoin(js, prefix, { subnetId: e.subnetId, providerId, stake: 1_000n });
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const economics = await askQuery(
      nc,
      SubnetEconomicsQuery,
      { subnetId: e.subnetId },
      { prefix, timeoutMs: 10_000 },
    );
    const joined = new Set(economics.providers.filter((p) => p.status === 'active').map((p) => p.providerId));
    if (economics.exists && e.providerIds.every((p) => joined.has(p))) return;
    if (Date.now() > deadline)
      throw new Error(
        `subnet ${e.subnetId} not ready after ${timeoutMs} ms: exists=${economics.exists}, joined=${[...joined].join(',')}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
};
