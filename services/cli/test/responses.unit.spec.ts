import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runCli } from '../src/app/cli';
import { fakeIo } from './fake-io';
import { jobFixture } from './fixtures';

const KEY = `gpn_AAAAAAAAAAAA_${'S3cr3t'.repeat(7)}x`;

describe("the gateway's answers (fuzz)", () => {
  it('any JSON answer to any command ends with a documented exit code, never a crash while printing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          ['job', 'ls'],
          ['job', 'get', 'j1'],
          ['job', 'cancel', 'j1'],
          ['job', 'statement', 'j1'],
          ['job', 'follow', 'j1'],
          ['job', 'logs', 'j1'],
          ['providers', 'ls'],
          ['subnet', 'get', 'ai'],
          ['subnet', 'join', 'ai', '--stake', '5'],
          ['subnet', 'leave', 'ai'],
          ['subnet', 'proposals', 'ai'],
          ['subnet', 'proposals', 'ai', 'p1'],
          ['subnet', 'vote', 'ai', 'p1', 'yes'],
          ['subnet', 'delegate', 'ai', '--provider', 'P1', '--amount', '5'],
          ['subnet', 'undelegate', 'ai', '--provider', 'P1'],
          ['subnet', 'appeal', 'ai', `slash-${'0'.repeat(32)}`],
          ['subnet', 'statement', 'ai'],
          ['account', 'balance'],
          ['account', 'statement', 'NTX:wallet:acme'],
        ),
        fc.json(),
        async (argv, body) => {
          const f = fakeIo(
            {},
            {
              env: { GPUNET_GATEWAY: 'http://gw.test', GPUNET_API_KEY: KEY },
              fetch: () => Promise.resolve(new Response(body, { status: 200 })),
            },
          );
          expect([0, 1, 2, 3, 4, 5]).toContain(await runCli(argv, f.io));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('names the field at fault', async () => {
    const f = fakeIo(
      {},
      {
        env: { GPUNET_GATEWAY: 'http://gw.test', GPUNET_API_KEY: KEY },
        fetch: () =>
          Promise.resolve(Response.json({ items: [{ ...jobFixture(), jobId: 7 }], nextCursor: null })),
      },
    );
    expect(await runCli(['job', 'ls'], f.io)).toBe(1);
    expect(f.stderr()).toContain(
      "the gateway's answer to GET /v1/jobs is not what this CLI understands (items.0.jobId:",
    );
  });
});
