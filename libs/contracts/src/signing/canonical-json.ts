import type { MessageDefinition } from '../message';

/**
 * JSON with sorted keys and no whitespace: the one encoding both sides sign and verify. Only plain
 * JSON values (objects, arrays, strings, finite numbers, booleans, null) are allowed.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('canonicalJson: numbers must be finite');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new TypeError(`canonicalJson: ${typeof value} is not JSON`);
};

/**
 * The text an edge signs for one message: its type, version and payload without `signature`, in
 * canonical JSON. The type is part of it, so a signature never carries over to another message.
 */
export const signingInput = (
  def: Pick<MessageDefinition, 'type' | 'version'>,
  data: Readonly<Record<string, unknown>>,
): string => {
  const { signature: _signature, ...unsigned } = data;
  return canonicalJson({ type: def.type, version: def.version, data: unsigned });
};
