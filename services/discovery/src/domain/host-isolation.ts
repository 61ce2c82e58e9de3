import { type EdgeIsolation, type Host, UNREPORTED_ISOLATION } from '@gpunet/contracts';

/**
 * The isolation a host's report says its edge runs ranks with: an edge older than isolation
 * reporting sends none, and is taken to run host processes (ADR 0072).
 */
export const reportedIsolation = (host: Host): EdgeIsolation => host.isolation ?? UNREPORTED_ISOLATION;
