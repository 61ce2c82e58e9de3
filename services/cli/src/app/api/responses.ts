import { z } from 'zod';

/*
 * What the CLI reads of the gateway's answers (docs/api.md), checked at the boundary: a gateway of
 * another version or a proxy's page ends the command with exit 1 and the field at fault, never with
 * a crash while printing. Loose objects: fields the CLI does not use pass through to `--json`.
 */

const Minor = z.string().regex(/^-?[0-9]{1,40}$/);

export const JobViewSchema = z.looseObject({
  jobId: z.string(),
  tenantId: z.string(),
  name: z.string(),
  subnetId: z.string(),
  asset: z.string(),
  gpus: z.number(),
  gpuClasses: z.array(z.string()),
  maxPricePerGpuHour: Minor,
  maxDurationSeconds: z.number(),
  status: z.string(),
  attempt: z.number().nullable(),
  reason: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  submittedAt: z.string(),
  updatedAt: z.string(),
  cancelRequestedAt: z.string().nullable(),
  placement: z
    .looseObject({
      allocations: z.array(
        z.looseObject({
          name: z.string(),
          gpuCount: z.number(),
          pricePerHourMinor: Minor,
          nodes: z.array(
            z.looseObject({
              providerId: z.string(),
              hostId: z.string(),
              gpuUuids: z.array(z.string()),
              ranks: z.number(),
            }),
          ),
        }),
      ),
      placedAt: z.string(),
    })
    .nullable(),
  ranks: z
    .array(
      z.looseObject({
        rank: z.number(),
        providerId: z.string(),
        hostId: z.string(),
        gpuClass: z.string(),
        address: z.string(),
      }),
    )
    .nullable(),
  usage: z.looseObject({ gpuSeconds: z.number(), final: z.boolean() }).nullable(),
  cost: z.looseObject({
    asset: z.string(),
    escrow: Minor.nullable(),
    accrued: Minor,
    remaining: Minor.nullable(),
    settled: z
      .looseObject({
        paidToProviders: Minor,
        subnetFees: Minor,
        platformFees: Minor,
        refunded: Minor,
        settledAt: z.string(),
      })
      .nullable(),
  }),
});

export const JobPageSchema = z.looseObject({
  items: z.array(JobViewSchema),
  nextCursor: z.string().nullable(),
});

export const JobStatementSchema = z.looseObject({
  jobId: z.string(),
  status: z.string(),
  asset: z.string().nullable(),
  funded: Minor,
  paidToProviders: Minor,
  subnetFees: Minor,
  platformFees: Minor,
  refunded: Minor,
  pending: Minor,
  escrowBalance: Minor,
  legs: z.array(
    z.looseObject({
      sequence: z.number(),
      code: z.string(),
      kind: z.string(),
      debitAccountId: z.string(),
      creditAccountId: z.string(),
      amount: Minor,
      at: z.string(),
    }),
  ),
});

export const ProviderListSchema = z.looseObject({
  items: z.array(
    z.looseObject({
      providerId: z.string(),
      name: z.string(),
      simulated: z.boolean(),
      subnets: z.array(z.string()),
      asset: z.string(),
      gpus: z.array(
        z.looseObject({ model: z.string(), vramBytes: z.number(), priceFloorMinor: Minor.nullable() }),
      ),
    }),
  ),
  nextCursor: z.string().nullable(),
});

export const AcceptedSchema = z.looseObject({ requestId: z.string(), detail: z.string() });

export const DepositReceiptSchema = z.looseObject({
  chainTxId: z.string(),
  ownerId: z.string(),
  asset: z.string(),
  amount: Minor,
  available: Minor,
});

export const SubnetSchema = z.looseObject({
  subnetId: z.string(),
  exists: z.boolean(),
  ownerId: z.string().nullable(),
  asset: z.string().nullable(),
  version: z.number(),
  ownerStake: Minor,
  treasury: Minor,
  providers: z.array(
    z.looseObject({
      providerId: z.string().optional(),
      stake: Minor.optional(),
      status: z.string().optional(),
    }),
  ),
  totalProviderStake: Minor,
  jobsSettled: z.number(),
  paidToProviders: Minor,
  subnetFees: Minor,
});

const BalanceSchema = z.looseObject({
  accountId: z.string(),
  asset: z.string(),
  purpose: z.string(),
  balance: Minor,
  available: Minor,
  creditsPending: Minor,
  debitsPending: Minor,
});

export const BalancesSchema = z.looseObject({ accounts: z.array(BalanceSchema) });

export const AccountStatementSchema = z.looseObject({
  account: BalanceSchema.nullable(),
  entries: z.array(
    z.looseObject({
      sequence: z.number(),
      direction: z.string(),
      code: z.string(),
      kind: z.string(),
      amount: Minor,
      jobId: z.string().nullable(),
      at: z.string(),
    }),
  ),
  nextAfterSequence: z.number().nullable(),
});

const PredictionSchema = z.looseObject({
  stepUs: z.number(),
  computeUs: z.number(),
  commUs: z.number(),
  intraHostUs: z.number(),
  intraSiteUs: z.number(),
  interSiteUs: z.number(),
});

/** `GET /v1/jobs/{id}/explanation`: the fields `job explain` prints. */
export const ExplanationSchema = z.looseObject({
  jobId: z.string(),
  status: z.string(),
  attempt: z.number(),
  explainedAt: z.string(),
  outcome: z.discriminatedUnion('kind', [
    z.looseObject({
      kind: z.literal('placement'),
      allocations: z.array(
        z.looseObject({
          name: z.string(),
          gpuCount: z.number(),
          sites: z.number(),
          strategy: z.string(),
          nodes: z.array(
            z.looseObject({
              providerId: z.string(),
              hostId: z.string(),
              siteId: z.string(),
              gpuUuids: z.array(z.string()),
            }),
          ),
          prediction: PredictionSchema,
          pricePerHourMinor: Minor,
          gpus: z.array(
            z.looseObject({
              hostId: z.string(),
              gpuUuid: z.string(),
              model: z.string(),
              precision: z.string(),
              tflops: z.number(),
              source: z.string(),
              ageMs: z.number().nullable(),
              slowest: z.boolean(),
            }),
          ),
          gpusOmitted: z.number(),
          links: z.array(
            z.looseObject({
              a: z.string(),
              b: z.string(),
              scope: z.string(),
              rttUs: z.number(),
              rttSource: z.string(),
              bandwidthBps: z.number(),
              bandwidthSource: z.string(),
              cappedByNic: z.boolean(),
              ageMs: z.number().nullable(),
              relayed: z.boolean(),
              estimateError: z.number().nullable(),
            }),
          ),
          linksOmitted: z.number(),
          alternatives: z.array(
            z.looseObject({
              nodes: z.array(z.looseObject({ hostId: z.string(), siteId: z.string(), gpus: z.number() })),
              prediction: PredictionSchema,
              pricePerHourMinor: Minor,
              lostOn: z.string(),
              message: z.string(),
            }),
          ),
        }),
      ),
    }),
    z.looseObject({
      kind: z.literal('failure'),
      code: z.string(),
      allocation: z.string().nullable(),
      message: z.string(),
      reasons: z.array(
        z.looseObject({
          plugin: z.string(),
          reason: z.string(),
          message: z.string(),
          gpus: z.number().nullable(),
        }),
      ),
    }),
  ]),
});
export type Explanation = z.infer<typeof ExplanationSchema>;
