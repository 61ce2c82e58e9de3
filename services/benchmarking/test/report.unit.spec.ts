import { toSvg } from '@gpunet/report-render';
import { describe, expect, it } from 'vitest';
import { type ReportInput, renderMarkdown, renderScene } from '../src/report/report';
import { h100Claim, profileFixture, simulatedProfileFor } from './fixtures';

const input: ReportInput = {
  generatedAt: '2030-01-01T00:00:00.000Z',
  providers: [
    { name: 'h200', source: 'recorded', profile: profileFixture('h200.recorded.profile.json') },
    {
      name: 'honest',
      source: 'simulated',
      claim: h100Claim(2),
      reliability: 0.85,
      profile: simulatedProfileFor(h100Claim(2)),
    },
    {
      name: 'fake',
      source: 'simulated',
      claim: h100Claim(1),
      reliability: 0.32,
      profile: simulatedProfileFor(h100Claim(1), 'T4'),
    },
    {
      name: 'cpu',
      source: 'recorded',
      claim: { simulated: false, gpus: [] },
      profile: profileFixture('cpu-epyc.recorded.profile.json'),
    },
  ],
  network: {
    hosts: [
      { id: 'h0', x: 0, y: 0, height: 100, site: 'h0' },
      { id: 'h1', x: 50, y: 0, height: 100, site: 'h0' },
      { id: 'h2', x: 24_000, y: 0, height: 100, site: 'h2' },
    ],
    links: [
      { a: 'h0', b: 'h2', rttUs: 24_300, throughputBitsPerSecond: null, sameSite: false },
      {
        a: 'h0',
        b: 'h2',
        rttUs: 24_100,
        throughputBitsPerSecond: 19.4e6,
        sameSite: false,
        expectedBitsPerSecond: 20e6,
      },
      { a: 'h0', b: 'h1', rttUs: 210, throughputBitsPerSecond: null, sameSite: true },
    ],
    accuracy: { pairs: 3, probedPairs: 2, unprobedPairs: 1, medianRttError: 0.021, maxThroughputError: 0.03 },
  },
};

describe('benchmark report', () => {
  it('tabulates every profile with its source and kind, and lists the claims that do not hold with evidence', () => {
    const md = renderMarkdown(input, 'report.png');
    expect(md).toContain('![GPU profiles and network](report.png)');
    expect(md).toMatch(/\| h200 \| recorded \| gpu \| NVIDIA H200 \| 1 \|/);
    expect(md).toMatch(
      /\| fake \| simulated \| simulated \| NVIDIA H100 80GB HBM3 \|.*\*\*mismatch\*\* \| 0\.32 \|/,
    );
    expect(md).toMatch(/\| cpu \| recorded \| cpu \|.*\| verified \|/);
    expect(md).toContain('## Claims that do not hold');
    expect(md).toMatch(
      /\*\*fake\*\* claims NVIDIA H100 80GB HBM3: matmul-fp32-tflops .* < 33\.5 \(H100 SXM: 67/,
    );
    expect(md).toContain(
      'measured 2026-12-04T16:49:38.540Z, expires 2026-12-11T16:49:38.540Z — peer suite skipped: one GPU',
    );
    expect(md).toContain('2 of 3 pairs probed');
    // One row per direction: the lowest RTT and the newest throughput.
    expect(md).toContain('| h0 | h2 | 24.1 | 19.4 | 20 |  |');
    expect(md).toContain('| h0 | h1 | 0.21 | – | – | yes |');
  });

  // How a scene becomes SVG and PNG is tested in tools/report-render.
  it('draws the plot: both panels, and one point per host', () => {
    const svg = toSvg(renderScene(input));
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('Dense matmul TFLOPS per device (log scale)');
    expect(svg).toContain('Memory bandwidth GB/s per device (log scale)');
    expect(svg.match(/<circle /g)).toHaveLength(3);
  });
});
