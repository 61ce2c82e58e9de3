import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSimulatedInventory } from '../src/domain/detection/simulated-inventory';
import { parsePolicy, POLICY_TEMPLATE } from '../src/domain/policy/policy';

const guide = readFileSync(join(import.meta.dirname, '../../../docs/provider-guide.md'), 'utf8');
const yamlBlocks = [...guide.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);

// The provider guide's snippets are the tested ones, so the guide cannot drift from the code.
describe('docs/provider-guide.md', () => {
  it('shows the policy template `edge init` writes, and it is valid', () => {
    const marked =
      /<!-- policy-template:start -->\s*```yaml\n([\s\S]*?)```\s*<!-- policy-template:end -->/.exec(guide);
    expect(marked?.[1]).toBe(POLICY_TEMPLATE);
    expect(parsePolicy(marked![1]!).ok).toBe(true);
  });

  it('shows a declared inventory that parses', () => {
    const inventory = yamlBlocks.find((b) => b.includes('# inventory.yaml'));
    const parsed = parseSimulatedInventory(inventory!);
    expect(parsed.ok && parsed.value.backend.gpus.length).toBe(8);
  });
});
