import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseCudaVersion,
  parseNvidiaSmiList,
  parseNvidiaSmiQuery,
  parseNvidiaTopology,
} from '../src/domain/detection/nvidia-smi.parser';
import { parseRocmSmiJson, parseRocmTopology } from '../src/domain/detection/rocm-smi.parser';
import { parseSimulatedInventory } from '../src/domain/detection/simulated-inventory';
import { parsePolicy, POLICY_TEMPLATE } from '../src/domain/policy/policy';
import { fixture } from './support/fixtures';

/**
 * Every parser of untrusted text (tool output, provider files) returns problems instead of throwing,
 * whatever it is given. The seed is fixed so a failure reproduces; set FUZZ_SEED to explore.
 */
const seed = Number(process.env['FUZZ_SEED'] ?? 20300101);
const runs = { seed, numRuns: 300 };

/** A fixture with lines dropped, duplicated, cut or with cells replaced by odd values. */
const mutated = (text: string): fc.Arbitrary<string> => {
  const lines = text.split('\n');
  const odd = fc.constantFrom(
    '',
    '[N/A]',
    '[Not Supported]',
    '-1',
    '99999999999999999999',
    'NV',
    'X',
    '\t',
    ',',
    '{',
    'GPU0',
    'card0',
    'null',
    '😀',
    'MiB',
  );
  return fc
    .array(
      fc.record({
        line: fc.nat({ max: Math.max(0, lines.length - 1) }),
        op: fc.constantFrom('drop', 'dup', 'cut', 'cell', 'key'),
        value: odd,
        at: fc.nat({ max: 200 }),
      }),
      { maxLength: 6 },
    )
    .map((edits) => {
      const out = [...lines];
      for (const e of edits) {
        const l = out[e.line] ?? '';
        if (e.op === 'drop') out.splice(e.line, 1);
        else if (e.op === 'dup') out.splice(e.line, 0, l);
        else if (e.op === 'cut') out[e.line] = l.slice(0, e.at % (l.length + 1));
        else if (e.op === 'cell') {
          const sep = l.includes('\t') ? '\t' : ',';
          const cells = l.split(sep);
          cells[e.at % Math.max(1, cells.length)] = e.value;
          out[e.line] = cells.join(sep);
        } else out[e.line] = l.replace(/"[^"]*"/, JSON.stringify(e.value));
      }
      return out.join('\n');
    });
};

const noThrow =
  <T>(parse: (text: string) => T) =>
  (text: string) => {
    expect(() => parse(text)).not.toThrow();
  };

// Hundreds of parses per property: bounded by work, not wall time, so give slow CI machines room.
describe('fuzz: parsers never throw', { timeout: 120_000 }, () => {
  it('nvidia-smi --query-gpu', () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), noThrow(parseNvidiaSmiQuery)), runs);
    for (const f of [
      'h100-sxm-8x.query.csv',
      'a100-mig.query.csv',
      'rtx-mixed.query.csv',
      'l4-noheader-nounits.query.csv',
    ])
      fc.assert(
        fc.property(mutated(fixture('nvidia', f)), (text) => {
          const { value } = parseNvidiaSmiQuery(text);
          // Whatever is returned is well-formed.
          for (const g of value) expect(g.vramBytes).toBeGreaterThanOrEqual(0);
        }),
        runs,
      );
  });

  it('nvidia-smi topo -m, -L and -q', () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), noThrow(parseNvidiaTopology)), runs);
    fc.assert(
      fc.property(mutated(fixture('nvidia', 'h100-sxm-8x.topo.txt')), noThrow(parseNvidiaTopology)),
      runs,
    );
    fc.assert(
      fc.property(mutated(fixture('nvidia', 'a100-mig.list.txt')), noThrow(parseNvidiaSmiList)),
      runs,
    );
    fc.assert(fc.property(fc.string({ maxLength: 200 }), noThrow(parseCudaVersion)), runs);
  });

  it('rocm-smi --json', () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), noThrow(parseRocmSmiJson)), runs);
    fc.assert(
      fc.property(fc.jsonValue(), (v) => noThrow(parseRocmSmiJson)(JSON.stringify(v) ?? 'null')),
      runs,
    );
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom('card0', 'card1', 'system', 'x'),
          fc.dictionary(fc.string(), fc.jsonValue()),
        ),
        (v) => noThrow(parseRocmSmiJson)(JSON.stringify(v)),
      ),
      runs,
    );
    fc.assert(
      fc.property(mutated(fixture('amd', 'mi250x-8gcd.rocm-smi.json')), noThrow(parseRocmSmiJson)),
      runs,
    );
    fc.assert(
      fc.property(mutated(fixture('amd', 'mi250x-8gcd.topo.json')), noThrow(parseRocmTopology)),
      runs,
    );
  });

  it('policy files', () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), noThrow(parsePolicy)), runs);
    fc.assert(
      fc.property(fc.jsonValue(), (v) => noThrow(parsePolicy)(JSON.stringify(v) ?? '')),
      runs,
    );
    fc.assert(
      fc.property(mutated(POLICY_TEMPLATE), (text) => {
        const r = parsePolicy(text);
        if (!r.ok) for (const i of r.issues) expect(typeof i.path).toBe('string');
      }),
      runs,
    );
    fc.assert(fc.property(mutated(fixture('policy', 'lab.policy.yaml')), noThrow(parsePolicy)), runs);
  });

  it('declared inventories', () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), noThrow(parseSimulatedInventory)), runs);
    fc.assert(
      fc.property(fc.jsonValue(), (v) => noThrow(parseSimulatedInventory)(JSON.stringify(v) ?? '')),
      runs,
    );
    fc.assert(
      fc.property(
        mutated(fixture('simulated', 'h100-node.inventory.yaml')),
        noThrow(parseSimulatedInventory),
      ),
      runs,
    );
  });
});
