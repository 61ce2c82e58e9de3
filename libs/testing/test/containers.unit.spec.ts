import { afterEach, describe, expect, it, vi } from 'vitest';
import { configureTestcontainers, dockerAvailable, DockerUnavailableError, requireDocker } from '../src';

// A socket path that cannot exist: Docker "does not answer".
const NOWHERE = `unix:///tmp/gpunet-no-docker-${process.pid}.sock`;

describe('docker detection', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('reports an engine that does not answer as unavailable, without throwing', async () => {
    vi.stubEnv('DOCKER_HOST', NOWHERE);
    await expect(dockerAvailable()).resolves.toBe(false);
    vi.stubEnv('DOCKER_HOST', 'tcp://127.0.0.1:1');
    await expect(dockerAvailable(500)).resolves.toBe(false);
  });

  it('fails a contract suite under CI instead of skipping it', async () => {
    vi.stubEnv('DOCKER_HOST', NOWHERE);
    vi.stubEnv('CI', 'true');
    await expect(requireDocker('bus contract')).rejects.toThrow(DockerUnavailableError);
    await expect(requireDocker('bus contract')).rejects.toThrow(
      /bus contract: Docker does not answer.*ensure-docker\.sh/,
    );
  });

  it('skips loudly outside CI', async () => {
    vi.stubEnv('DOCKER_HOST', NOWHERE);
    vi.stubEnv('CI', '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    await expect(requireDocker('bus contract')).resolves.toBe(false);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('SKIPPING bus contract'));
  });

  it('disables Ryuk unless the environment already decided', () => {
    vi.stubEnv('TESTCONTAINERS_RYUK_DISABLED', undefined);
    configureTestcontainers();
    expect(process.env['TESTCONTAINERS_RYUK_DISABLED']).toBe('true');
    vi.stubEnv('TESTCONTAINERS_RYUK_DISABLED', 'false');
    configureTestcontainers();
    expect(process.env['TESTCONTAINERS_RYUK_DISABLED']).toBe('false');
  });

  it("reaches a local engine's containers on 127.0.0.1, where their ports are published", () => {
    vi.stubEnv('TESTCONTAINERS_HOST_OVERRIDE', undefined);
    vi.stubEnv('DOCKER_HOST', undefined);
    configureTestcontainers();
    expect(process.env['TESTCONTAINERS_HOST_OVERRIDE']).toBe('127.0.0.1');
    vi.stubEnv('TESTCONTAINERS_HOST_OVERRIDE', undefined);
    vi.stubEnv('DOCKER_HOST', 'unix:///run/user/1000/docker.sock');
    configureTestcontainers();
    expect(process.env['TESTCONTAINERS_HOST_OVERRIDE']).toBe('127.0.0.1');
  });

  it('leaves the host to testcontainers for a remote engine, and an explicit override alone', () => {
    vi.stubEnv('TESTCONTAINERS_HOST_OVERRIDE', undefined);
    vi.stubEnv('DOCKER_HOST', 'tcp://docker.internal:2375');
    configureTestcontainers();
    expect(process.env['TESTCONTAINERS_HOST_OVERRIDE']).toBeUndefined();
    vi.stubEnv('DOCKER_HOST', undefined);
    vi.stubEnv('TESTCONTAINERS_HOST_OVERRIDE', '10.0.0.5');
    configureTestcontainers();
    expect(process.env['TESTCONTAINERS_HOST_OVERRIDE']).toBe('10.0.0.5');
  });
});
