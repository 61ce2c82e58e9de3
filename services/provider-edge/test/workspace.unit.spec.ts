import { describe, expect, it } from 'vitest';
import { mountPointsUnder } from '../src/infra/workspace';
import { workspaceImage } from '../src/infra/runtime/workspace-quota';

// Lines as /proc/self/mountinfo has them: the fifth field is the mount point, octal-escaped.
const MOUNTINFO = [
  '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
  '301 22 7:0 / /var/lib/gpunet/workspaces/job-1/rank-0 rw,nosuid,nodev shared:150 - ext4 /dev/loop0 rw',
  '302 22 7:1 / /var/lib/gpunet/workspaces/job-1/rank-1 rw,nosuid,nodev shared:151 - ext4 /dev/loop1 rw',
  '303 301 0:50 / /var/lib/gpunet/workspaces/job-1/rank-0/mnt rw shared:152 - tmpfs tmpfs rw',
  '304 22 7:2 / /var/lib/gpunet/workspaces/job-10/rank-0 rw - ext4 /dev/loop2 rw',
  '305 22 7:3 / /var/lib/gpunet/workspaces/job\\0402/rank-0 rw - ext4 /dev/loop3 rw',
  '',
].join('\n');

describe('mountPointsUnder: what removeWorkspaces unmounts before removing', () => {
  it('lists the mounts at or below a directory, deepest first, and nothing of a sibling sharing its prefix', () => {
    expect(mountPointsUnder(MOUNTINFO, '/var/lib/gpunet/workspaces/job-1')).toEqual([
      '/var/lib/gpunet/workspaces/job-1/rank-0/mnt',
      '/var/lib/gpunet/workspaces/job-1/rank-1',
      '/var/lib/gpunet/workspaces/job-1/rank-0',
    ]);
    expect(mountPointsUnder(MOUNTINFO, '/var/lib/gpunet/workspaces/job-1/rank-1/')).toEqual([
      '/var/lib/gpunet/workspaces/job-1/rank-1',
    ]);
  });

  it('reads escaped mount points as the kernel names them (a space is \\040)', () => {
    expect(mountPointsUnder(MOUNTINFO, '/var/lib/gpunet/workspaces/job 2')).toEqual([
      '/var/lib/gpunet/workspaces/job 2/rank-0',
    ]);
  });

  it('finds nothing in an empty or foreign text', () => {
    expect(mountPointsUnder('', '/x')).toEqual([]);
    expect(mountPointsUnder('garbage\n1 2\n', '/x')).toEqual([]);
  });
});

describe('workspaceImage', () => {
  it('lies next to the workspace, in the job directory the rank cannot see', () => {
    expect(workspaceImage('/d/workspaces/job-1/rank-0')).toBe('/d/workspaces/job-1/rank-0.ext4');
    expect(workspaceImage('/d/workspaces/job-1/rank-0/')).toBe('/d/workspaces/job-1/rank-0.ext4');
  });
});
