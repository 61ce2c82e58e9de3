import { EdgeIsolationSchema } from '@gpunet/contracts';
import { describe, expect, it } from 'vitest';
import {
  type DockerInfo,
  dockerIsolation,
  isolationOfRuntimes,
  noRanksIsolation,
  probeDockerIsolation,
  processIsolation,
} from '../src/infra/runtime/isolation';
import { dockerIsolationFor, ociRuntimeFor } from '../src/infra/runtime/docker-wiring';
import { parsePolicy, POLICY_TEMPLATE } from '../src/domain/policy/policy';
import { fixture } from './support/fixtures';

/* Recorded `GET /info` of Docker 20.10 on Debian 12 (test/fixtures/README.md). */
const RUNC = JSON.parse(fixture('docker', 'info.runc.json')) as DockerInfo;
const USERNS = JSON.parse(fixture('docker', 'info.userns-remap.json')) as DockerInfo;
/* Not recorded: the runc recording with what rootless Docker adds to SecurityOptions. */
const ROOTLESS: DockerInfo = {
  ...RUNC,
  SecurityOptions: [...(RUNC.SecurityOptions ?? []), 'name=rootless', 'name=cgroupns'],
};
/* Not recorded: the runc recording without runsc registered. */
const NO_RUNSC: DockerInfo = {
  ...RUNC,
  Runtimes: Object.fromEntries(Object.entries(RUNC.Runtimes ?? {}).filter(([name]) => name !== 'runsc')),
};

interface Case {
  readonly name: string;
  readonly info: DockerInfo;
  readonly ociRuntime: string | null;
  readonly expected: { level: string; ociRuntime: string; userNamespaces: boolean };
  /** Words the detail line must carry. */
  readonly detail: RegExp;
}

const cases: Case[] = [
  {
    name: 'plain Docker with runc: container, and container root is host root',
    info: RUNC,
    ociRuntime: null,
    expected: { level: 'container', ociRuntime: 'runc', userNamespaces: false },
    detail: /^Docker 20\.10\.24\+dfsg1 with runc: container root is host root/,
  },
  {
    name: 'rank containers on runc, named: container',
    info: RUNC,
    ociRuntime: 'runc',
    expected: { level: 'container', ociRuntime: 'runc', userNamespaces: false },
    detail: /with runc/,
  },
  {
    name: 'userns-remap: container-userns',
    info: USERNS,
    ociRuntime: null,
    expected: { level: 'container-userns', ociRuntime: 'runc', userNamespaces: true },
    detail: /container root is an unprivileged host uid \(userns-remap\)/,
  },
  {
    name: 'rootless Docker: container-userns',
    info: ROOTLESS,
    ociRuntime: null,
    expected: { level: 'container-userns', ociRuntime: 'runc', userNamespaces: true },
    detail: /\(rootless Docker\)/,
  },
  {
    name: 'rank containers on runsc: gvisor',
    info: RUNC,
    ociRuntime: 'runsc',
    expected: { level: 'gvisor', ociRuntime: 'runsc', userNamespaces: false },
    detail:
      /with runsc \(gVisor\): a user-space kernel answers the job’s system calls; container root is host root/,
  },
  {
    name: 'runsc with userns-remap: gvisor, user namespaces on',
    info: USERNS,
    ociRuntime: 'runsc',
    expected: { level: 'gvisor', ociRuntime: 'runsc', userNamespaces: true },
    detail: /gVisor.*userns-remap/,
  },
  {
    name: 'runsc as the engine’s default runtime, rank containers naming none: gvisor',
    info: { ...RUNC, DefaultRuntime: 'runsc' },
    ociRuntime: null,
    expected: { level: 'gvisor', ociRuntime: 'runsc', userNamespaces: false },
    detail: /runsc \(gVisor\)/,
  },
  {
    name: 'runsc registered under another name: gvisor',
    info: { ...NO_RUNSC, Runtimes: { ...NO_RUNSC.Runtimes, gvisor: { path: '/usr/bin/runsc' } } },
    ociRuntime: 'gvisor',
    expected: { level: 'gvisor', ociRuntime: 'gvisor', userNamespaces: false },
    detail: /gvisor \(gVisor\)/,
  },
  {
    name: 'runsc asked for and not registered: container, and says ranks fail',
    info: NO_RUNSC,
    ociRuntime: 'runsc',
    expected: { level: 'container', ociRuntime: 'runsc', userNamespaces: false },
    detail:
      /has no OCI runtime runsc \(it has io\.containerd\.runc\.v2, .*runc\): rank containers fail to start/,
  },
  {
    name: 'an engine that names no security options nor runtimes: container',
    info: { ServerVersion: '27.0.1', SecurityOptions: null, Runtimes: { runc: { path: 'runc' } } },
    ociRuntime: null,
    expected: { level: 'container', ociRuntime: 'runc', userNamespaces: false },
    detail: /^Docker 27\.0\.1 with runc/,
  },
];

describe('dockerIsolation: the level from the engine’s own docker info', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const isolation = dockerIsolation(c.info, c.ociRuntime);
    expect(EdgeIsolationSchema.parse(isolation)).toEqual(isolation);
    expect(isolation).toMatchObject({ runtime: 'docker', ...c.expected });
    expect(isolation.detail).toMatch(c.detail);
  });

  it('reads the option names out of compound security options', () => {
    expect(RUNC.SecurityOptions).toEqual(['name=seccomp,profile=default']);
    expect(USERNS.SecurityOptions).toContain('name=userns');
    expect(dockerIsolation({ ...RUNC, SecurityOptions: ['name=seccomp,profile=userns'] }, null).level).toBe(
      'container',
    );
  });
});

describe('probeDockerIsolation', () => {
  it('asks the engine', async () => {
    expect(await probeDockerIsolation({ info: () => Promise.resolve(USERNS) }, null)).toEqual(
      dockerIsolation(USERNS, null),
    );
  });

  it('takes an engine that does not answer as plain containers, and says so', async () => {
    const isolation = await probeDockerIsolation(
      { info: () => Promise.reject(new Error('connect ENOENT /var/run/docker.sock')) },
      'runsc',
    );
    expect(isolation).toMatchObject({
      level: 'container',
      runtime: 'docker',
      ociRuntime: 'runsc',
      userNamespaces: false,
    });
    expect(isolation.detail).toBe(
      'the Docker engine did not answer (connect ENOENT /var/run/docker.sock): user namespaces and the OCI runtime are not checked',
    );
  });
});

describe('isolationOfRuntimes: an edge told nothing else', () => {
  const engine = () => ({ info: () => Promise.resolve(USERNS) });

  it('is host-process with the process runtime among its runtimes', async () => {
    expect(await isolationOfRuntimes(['docker', 'process'], engine)).toEqual(processIsolation());
    expect(processIsolation()).toMatchObject({ level: 'host-process', runtime: 'process', ociRuntime: null });
  });

  it('is the engine’s with only the docker runtime', async () => {
    expect(await isolationOfRuntimes(['docker'], engine)).toMatchObject({ level: 'container-userns' });
  });

  it('is the weakest level with ranks off', async () => {
    expect(await isolationOfRuntimes([], engine)).toEqual(noRanksIsolation());
    expect(noRanksIsolation()).toMatchObject({ level: 'host-process', runtime: 'none' });
    expect(EdgeIsolationSchema.parse(noRanksIsolation())).toEqual(noRanksIsolation());
    expect(EdgeIsolationSchema.parse(processIsolation())).toEqual(processIsolation());
  });
});

describe('dockerIsolationFor: the reported level follows policy sandbox.runtime', () => {
  const policyWith = (runtime: string) => {
    const parsed = parsePolicy(POLICY_TEMPLATE.replace(/^ {2}runtime: runc$/m, `  runtime: ${runtime}`));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    return parsed.policy;
  };
  /* Not recorded: the runc recording with runsc registered as ensure-docker.sh registers it. */
  const WITH_RUNSC: DockerInfo = {
    ...RUNC,
    Runtimes: { ...RUNC.Runtimes, runsc: { path: '/usr/bin/runsc' } },
  };
  const engine = { info: () => Promise.resolve(WITH_RUNSC) };

  it('names runsc for runsc and no runtime (the engine default) for runc', () => {
    expect(ociRuntimeFor(policyWith('runsc'))).toBe('runsc');
    expect(ociRuntimeFor(policyWith('runc'))).toBeNull();
  });

  it('reports gvisor under sandbox.runtime runsc and container under runc, on the same engine', async () => {
    expect(await dockerIsolationFor(policyWith('runsc'), engine)).toMatchObject({
      level: 'gvisor',
      ociRuntime: 'runsc',
    });
    expect(await dockerIsolationFor(policyWith('runc'), engine)).toMatchObject({
      level: 'container',
      ociRuntime: 'runc',
    });
  });
});
