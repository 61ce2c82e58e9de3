import { describe, expect, it } from 'vitest';
import { hostIds, remapsUsers, uidRemapOf } from '../src/infra/runtime/userns-remap';

const SUBUID = 'builder:200000:65536\ndockremap:100000:65536\n';
const SUBGID = 'dockremap:300000:65536\n';
const REMAPPED = {
  SecurityOptions: ['name=seccomp,profile=default', 'name=userns'],
  DockerRootDir: '/var/lib/docker/100000.300000',
};

describe('userns-remap: who owns a rank’s workspace on the host', () => {
  it('a daemon without name=userns remaps nothing: 65532 stays 65532', () => {
    const info = { SecurityOptions: ['name=seccomp,profile=default'], DockerRootDir: '/var/lib/docker' };
    expect(remapsUsers(info)).toBe(false);
    expect(uidRemapOf(info, { subuid: SUBUID, subgid: SUBGID })).toBeNull();
    expect(hostIds(null, 65532, 65532)).toEqual({ uid: 65532, gid: 65532 });
  });

  it('reads the remapped root from the daemon’s root dir, and the range size from /etc/subuid', () => {
    const remap = uidRemapOf(REMAPPED, { subuid: SUBUID, subgid: SUBGID });
    expect(remap).toEqual({ uid: 100000, gid: 300000, count: 65536 });
    expect(hostIds(remap, 65532, 65532)).toEqual({ uid: 165532, gid: 365532 });
  });

  it('falls back to dockremap’s subordinate ranges where the root dir does not say', () => {
    const info = { SecurityOptions: ['name=userns'], DockerRootDir: '/srv/docker' };
    expect(uidRemapOf(info, { subuid: SUBUID, subgid: SUBGID })).toEqual({
      uid: 100000,
      gid: 300000,
      count: 65536,
    });
    expect(() => uidRemapOf(info, { subuid: 'builder:200000:65536', subgid: null })).toThrow(
      /remaps users .* no range for dockremap/,
    );
  });

  it('refuses a container uid outside a too small range rather than chown to a wrong uid', () => {
    const small = uidRemapOf(REMAPPED, { subuid: 'dockremap:100000:1000', subgid: SUBGID });
    expect(() => hostIds(small, 65532, 65532)).toThrow(/outside the daemon's subordinate uid range/);
  });
});
