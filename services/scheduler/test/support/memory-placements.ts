import {
  announcingJobPlacementDecider,
  isAnnouncement,
  type JobPlacementAnnouncement,
} from '../../src/domain/job-placement.announcements';
import type { JobPlacementOptions, JobPlacementState } from '../../src/domain/job-placement.decider';
import type { JobPlacements } from '../../src/app/placement.engine';

/**
 * The job placement write path in memory, for engine tests: each job's state, decided with the
 * same decider as the service's command handler. Announcements reach `announced` a turn after the
 * decision, as the outbox publishes them only once it committed.
 */
export const memoryPlacements = (
  announced: (announcement: JobPlacementAnnouncement) => void,
  options: JobPlacementOptions = {},
): JobPlacements => {
  const decider = announcingJobPlacementDecider(options);
  const states = new Map<string, JobPlacementState>();
  let ids = 0;
  return {
    decide: async (job, input) => {
      await Promise.resolve();
      const before = states.get(job.jobId) ?? decider.initialState;
      const command = typeof input === 'function' ? input(before) : input;
      const records = command === null ? [] : decider.decide({ job, command }, before);
      const state = records.reduce(decider.evolve, before);
      states.set(job.jobId, state);
      const announcements = records.filter(isAnnouncement);
      if (announcements.length > 0) setImmediate(() => announcements.forEach(announced));
      return {
        state,
        events: records.flatMap((event) =>
          isAnnouncement(event)
            ? []
            : [{ event, cause: { correlationId: job.jobId, causationId: `event-${++ids}` } }],
        ),
      };
    },
  };
};
