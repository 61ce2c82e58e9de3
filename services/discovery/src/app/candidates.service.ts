import type { CandidateProvider, QueryResponse, FindCandidates } from '@gpunet/contracts';
import type { Database } from '@gpunet/eventing';
import {
  availableFor,
  type CandidateRequest,
  candidateCriteria,
  locationAllowed,
  versionsSatisfied,
} from '../domain/candidate.filter';
import { findCandidateRows } from '../infra/candidate.repository';

/** Pages SQL may read to fill one page when checks outside SQL drop providers. */
const MAX_ROUNDS = 8;

/**
 * Answers the candidate query: online providers' free, shared GPUs meeting the requirement, grouped
 * by provider and paged by provider id. SQL filters what it can through the offered-GPU index;
 * driver version ranges, availability windows and locations are checked here, and the page is
 * topped up from the following providers when they drop some.
 */
export const findCandidates = async (
  db: Pick<Database, 'query' | 'schema'>,
  request: CandidateRequest,
  nowMs: number,
): Promise<QueryResponse<typeof FindCandidates>> => {
  const criteria = candidateCriteria(request);
  const atMs = request.at === null ? nowMs : Date.parse(request.at);
  const items: CandidateProvider[] = [];
  let cursor = request.cursor;
  let exhausted = false;
  for (let round = 0; round < MAX_ROUNDS && items.length < request.limit; round++) {
    const want = request.limit - items.length;
    const rows = await findCandidateRows(db, criteria, cursor, want);
    for (const { provider, gpus } of rows) {
      cursor = provider.providerId;
      if (!availableFor(provider.availability, atMs, request.maxDurationMs)) continue;
      if (!locationAllowed(request.location, provider.location)) continue;
      const fit = gpus.filter((g) => versionsSatisfied(g, request.gpu.cuda, request.gpu.rocm));
      if (Math.min(fit.length, provider.maxGpusPerJob) < request.minGpusPerProvider || fit.length === 0)
        continue;
      const { availability: _a, ...rest } = provider;
      items.push({ ...rest, gpus: fit });
    }
    if (rows.length < want) {
      exhausted = true;
      break;
    }
  }
  return { items, nextCursor: exhausted ? null : cursor };
};
