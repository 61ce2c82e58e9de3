import type {
  BenchmarkProfile,
  ChallengeEvidence,
  FindGpuVerification,
  GetProviderTrust,
  GpuVerificationStatus,
  JobFunded,
  JobPlaced,
  PayloadOf,
  QueryResponse,
} from '@gpunet/contracts';
import type { Database, Tx } from '@gpunet/eventing';
import type { ProviderChallengeView } from '../domain/challenge-schedule';
import type { GpuChallengeEvent, GpuChallengeState } from '../domain/gpu-challenge';
import type { Claim } from '../domain/verification';
import { reliabilityOf, type ReliabilityRow } from './queries.repository';
import type { Sql } from './sql';

/*
 * GPU challenges as benchmarking's tables hold them: each provider's GPUs and the challenge out,
 * projected from its decision's state in the deciding transaction; the concluded challenges with
 * their evidence; and the running jobs whose GPUs are spot-checked.
 */

/** Writes a provider's GPU statuses and challenge out as the decision left them, and the challenges it concluded. */
export const projectChallengeDecision = async (
  tx: Tx,
  providerId: string,
  events: readonly GpuChallengeEvent[],
  after: GpuChallengeState,
): Promise<void> => {
  const s = tx.schema;
  if (events.length === 0) return;
  if (events.some((e) => e.type === 'gpu.verification-changed')) {
    await tx.execute(
      `DELETE FROM "${s}".gpu_verification WHERE provider_id = $1 AND NOT (gpu_uuid = ANY($2))`,
      [providerId, after.gpus.map((g) => g.uuid)],
    );
    for (const [position, g] of after.gpus.entries())
      await tx.execute(
        `INSERT INTO "${s}".gpu_verification (provider_id, gpu_uuid, position, status, since, challenge_id)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (provider_id, gpu_uuid) DO UPDATE SET position = $3, status = $4, since = $5, challenge_id = $6`,
        [providerId, g.uuid, position, g.status, g.since, g.challengeId],
      );
  }
  await tx.execute(
    `INSERT INTO "${s}".challenge_state (provider_id, pending_challenge_id, pending_expires_at, last_challenge_at)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (provider_id) DO UPDATE SET pending_challenge_id = $2, pending_expires_at = $3, last_challenge_at = $4`,
    [
      providerId,
      after.challenge?.challengeId ?? null,
      after.challenge?.expiresAt ?? null,
      after.lastChallengeAt,
    ],
  );
  for (const e of events)
    if (e.type === 'provider.challenged')
      await tx.execute(
        `INSERT INTO "${s}".challenges (challenge_id, provider_id, reason, job_id, gpu_uuid, outcome, evidence, at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (challenge_id) DO NOTHING`,
        [
          e.data.challengeId,
          providerId,
          e.data.reason,
          e.data.jobId,
          e.data.gpuUuid,
          e.data.outcome,
          JSON.stringify(e.data.evidence),
          e.data.at,
        ],
      );
};

/** Challenges out whose time to be decided has passed at `nowIso`. */
export const overdueChallenges = async (
  tx: Tx,
  nowIso: string,
): Promise<{ providerId: string; challengeId: string }[]> =>
  (
    await tx.query<{ provider_id: string; pending_challenge_id: string }>(
      `SELECT provider_id, pending_challenge_id FROM "${tx.schema}".challenge_state
        WHERE pending_challenge_id IS NOT NULL AND pending_expires_at <= $1 ORDER BY provider_id`,
      [nowIso],
    )
  ).map((r) => ({ providerId: r.provider_id, challengeId: r.pending_challenge_id }));

/** Takes the challenge tick's lock for `tx` if no other replica holds it. */
export const tryLockChallengeTick = async (tx: Tx): Promise<boolean> => {
  const [lock] = await tx.query<{ locked: boolean }>(
    'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked',
    [`${tx.schema}.challenge-tick`],
  );
  return lock?.locked === true;
};

/** One provider as the challenge tick sees it, with its claim and live profile to size challenges by. */
export interface ChallengeCandidate {
  readonly view: ProviderChallengeView;
  readonly claim: Claim;
  readonly profile: BenchmarkProfile | null;
}

/** Every provider not deregistered whose GPUs benchmarking tracks, its running jobs and live profile. */
export const challengeCandidates = async (tx: Tx, now: Date): Promise<ChallengeCandidate[]> => {
  const s = tx.schema;
  const rows = await tx.query<{
    provider_id: string;
    status: string;
    busy: boolean;
    claim: Claim;
    pending_challenge_id: string | null;
    profile: BenchmarkProfile | null;
    gpus: { uuid: string; status: GpuVerificationStatus }[];
  }>(
    `SELECT p.provider_id, p.status, p.busy, p.claim, c.pending_challenge_id,
            CASE WHEN g.expires_at > $1 THEN g.profile END AS profile,
            coalesce((SELECT jsonb_agg(jsonb_build_object('uuid', v.gpu_uuid, 'status', v.status) ORDER BY v.position)
                        FROM "${s}".gpu_verification v WHERE v.provider_id = p.provider_id), '[]'::jsonb) AS gpus
       FROM "${s}".providers p
       LEFT JOIN "${s}".challenge_state c USING (provider_id)
       LEFT JOIN "${s}".gpu_profiles g USING (provider_id)
      WHERE p.status <> 'deregistered'
      ORDER BY p.provider_id`,
    [now.toISOString()],
  );
  const jobs = await tx.query<{
    job_id: string;
    spot_checks_per_gpu_hour: number;
    placement: { providerId: string; gpuUuids: string[] }[];
  }>(
    `SELECT job_id, spot_checks_per_gpu_hour, placement FROM "${s}".challenge_jobs
      WHERE NOT ended AND placement IS NOT NULL AND spot_checks_per_gpu_hour IS NOT NULL ORDER BY job_id`,
  );
  return rows.map((r) => ({
    claim: r.claim,
    profile: r.profile,
    view: {
      providerId: r.provider_id,
      online: r.status === 'online',
      busy: r.busy,
      pending: r.pending_challenge_id !== null,
      gpus: r.gpus,
      jobs: jobs.flatMap((j) =>
        j.placement
          .filter((n) => n.providerId === r.provider_id)
          .map((n) => ({
            jobId: j.job_id,
            gpuUuids: n.gpuUuids,
            spotChecksPerGpuHour: j.spot_checks_per_gpu_hour,
          })),
      ),
    },
  }));
};

/** A funded job's spot-check rate (its subnet's trust terms). */
export const applyJobFunded = async (tx: Tx, job: PayloadOf<typeof JobFunded>): Promise<void> => {
  await tx.execute(
    `INSERT INTO "${tx.schema}".challenge_jobs (job_id, spot_checks_per_gpu_hour) VALUES ($1, $2)
     ON CONFLICT (job_id) DO UPDATE SET spot_checks_per_gpu_hour = $2`,
    [job.jobId, job.terms.trust.spotChecksPerGpuHour],
  );
};

/** A placed job's GPUs per provider (the newest placement attempt's). */
export const applyJobPlaced = async (tx: Tx, job: PayloadOf<typeof JobPlaced>): Promise<void> => {
  const byProvider = new Map<string, Set<string>>();
  for (const a of job.allocations)
    for (const n of a.nodes) {
      const set = byProvider.get(n.providerId) ?? new Set<string>();
      for (const u of n.gpuUuids) set.add(u);
      byProvider.set(n.providerId, set);
    }
  const placement = [...byProvider].map(([providerId, uuids]) => ({ providerId, gpuUuids: [...uuids] }));
  await tx.execute(
    `INSERT INTO "${tx.schema}".challenge_jobs (job_id, placement, attempt) VALUES ($1, $2::jsonb, $3)
     ON CONFLICT (job_id) DO UPDATE SET placement = $2::jsonb, attempt = $3 WHERE challenge_jobs.attempt <= $3`,
    [job.jobId, JSON.stringify(placement), job.attempt],
  );
};

/** The job ended (remembered, so that a placement arriving late does not start spot checks again). */
export const applyJobEnded = async (tx: Tx, jobId: string): Promise<void> => {
  await tx.execute(
    `INSERT INTO "${tx.schema}".challenge_jobs (job_id, ended) VALUES ($1, true)
     ON CONFLICT (job_id) DO UPDATE SET ended = true`,
    [jobId],
  );
};

/** One provider's trust: its GPUs' statuses, reliability and latest 20 challenges; null if never seen. */
export const getProviderTrust = async (
  db: Sql | Database,
  providerId: string,
): Promise<QueryResponse<typeof GetProviderTrust>> => {
  const s = db.schema;
  const [p] = await db.query<ReliabilityRow & { simulated: boolean }>(
    `SELECT p.provider_id, p.simulated, b.reliability, b.mismatches, b.verified_runs, b.failed_runs,
            b.last_verified_at, b.last_mismatch_at
       FROM "${s}".providers p LEFT JOIN "${s}".benchmark_state b USING (provider_id)
      WHERE p.provider_id = $1`,
    [providerId],
  );
  if (p === undefined) return { trust: null };
  const gpus = await db.query<{
    gpu_uuid: string;
    status: GpuVerificationStatus;
    since: Date;
    challenge_id: string | null;
  }>(
    `SELECT gpu_uuid, status, since, challenge_id FROM "${s}".gpu_verification WHERE provider_id = $1 ORDER BY position`,
    [providerId],
  );
  const challenges = await db.query<{
    challenge_id: string;
    reason: 'registration' | 'idle' | 'spot-check' | 'manual';
    job_id: string | null;
    gpu_uuid: string;
    outcome: 'passed' | 'failed';
    evidence: ChallengeEvidence;
    at: Date;
  }>(
    `SELECT challenge_id, reason, job_id, gpu_uuid, outcome, evidence, at FROM "${s}".challenges
      WHERE provider_id = $1 ORDER BY at DESC, seq DESC LIMIT 20`,
    [providerId],
  );
  return {
    trust: {
      providerId,
      simulated: p.simulated,
      reliability: reliabilityOf(p),
      gpus: gpus.map((g) => ({
        uuid: g.gpu_uuid,
        status: g.status,
        since: g.since.toISOString(),
        challengeId: g.challenge_id,
      })),
      challenges: challenges.map((c) => ({
        challengeId: c.challenge_id,
        reason: c.reason,
        jobId: c.job_id,
        gpuUuid: c.gpu_uuid,
        outcome: c.outcome,
        evidence: c.evidence,
        at: c.at.toISOString(),
      })),
    },
  };
};

/**
 * Each GPU's status for a page of providers, in one statement: the providers benchmarking knows,
 * ordered by id, each with its GPUs in inventory order.
 */
export const findGpuVerification = async (
  db: Sql | Database,
  providerIds: readonly string[],
): Promise<QueryResponse<typeof FindGpuVerification>> => {
  const s = db.schema;
  const rows = await db.query<{
    provider_id: string;
    simulated: boolean;
    gpus: { uuid: string; status: GpuVerificationStatus }[];
  }>(
    `SELECT p.provider_id, p.simulated,
            coalesce((SELECT jsonb_agg(jsonb_build_object('uuid', v.gpu_uuid, 'status', v.status) ORDER BY v.position)
                        FROM "${s}".gpu_verification v WHERE v.provider_id = p.provider_id), '[]'::jsonb) AS gpus
       FROM "${s}".providers p
      WHERE p.provider_id = ANY($1)
      ORDER BY p.provider_id`,
    [providerIds],
  );
  return { items: rows.map((r) => ({ providerId: r.provider_id, simulated: r.simulated, gpus: r.gpus })) };
};
