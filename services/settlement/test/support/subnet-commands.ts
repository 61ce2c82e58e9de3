import type { SlashingPolicy } from '@gpunet/contracts';
import { slashIdOf } from '../../src/app/settlement.commands';
import type { FaultKind, SubnetCommand } from '../../src/domain/subnet/subnet.decider';
import { AT } from './subnet.fixture';

/** A job fault's slash of `providerId` in `s1`, its id derived as settlement derives it. */
export const slash = (
  providerId: string,
  reference: string,
  bps: number,
  options: {
    readonly kind?: FaultKind;
    readonly policy?: Partial<SlashingPolicy>;
    readonly beneficiaryId?: string | null;
    readonly jobId?: string | null;
    readonly at?: string;
  } = {},
): SubnetCommand => {
  const evidence = {
    kind: options.kind ?? 'host-lost',
    source: 'job-fault' as const,
    jobId: options.jobId === undefined ? reference : options.jobId,
    reference,
    detail: 'test',
  };
  return {
    type: 'ProposeSlash',
    slashId: slashIdOf('s1', providerId, evidence),
    providerId,
    evidence,
    bps,
    policy: { appealSeconds: 0, destination: 'treasury', jailSeconds: 0, ...options.policy },
    beneficiaryId: options.beneficiaryId ?? null,
    at: options.at ?? AT,
  };
};
