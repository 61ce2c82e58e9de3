import fc from 'fast-check';

/*
 * fast-check arbitraries generated from the gateway's OpenAPI document: values that satisfy a JSON
 * Schema (valid requests) and values that break it in typical ways (invalid requests). Small on
 * purpose: strings and arrays are kept short so that thousands of requests stay fast.
 */

type Schema = Record<string, unknown>;

const MAX_DEPTH = 6;

const resolve = (schema: Schema, doc: Schema): Schema => {
  const ref = schema['$ref'];
  if (typeof ref !== 'string' || !ref.startsWith('#/components/schemas/')) return schema;
  const name = ref.slice('#/components/schemas/'.length);
  const target = ((doc['components'] as Schema)['schemas'] as Record<string, Schema>)[name];
  return target ? resolve(target, doc) : {};
};

const boundedString = (schema: Schema): fc.Arbitrary<string> => {
  if (typeof schema['pattern'] === 'string') {
    let regex: RegExp;
    try {
      regex = new RegExp(schema['pattern']);
    } catch {
      return fc.string({ maxLength: 16 });
    }
    const max = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : Infinity;
    const min = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
    return fc
      .stringMatching(regex)
      .filter((s) => s.length >= min && s.length <= max)
      .map((s) => s.slice(0, 200));
  }
  const min = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
  const max = Math.min(typeof schema['maxLength'] === 'number' ? schema['maxLength'] : 24, Math.max(min, 24));
  return fc.string({ minLength: min, maxLength: max });
};

/** Values valid against `schema` (as far as JSON Schema can say). */
export const validValue = (schema: Schema, doc: Schema, depth = 0): fc.Arbitrary<unknown> => {
  const s = resolve(schema, doc);
  if (depth > MAX_DEPTH) return fc.constant(null);
  if ('const' in s) return fc.constant(s['const']);
  if (Array.isArray(s['enum'])) return fc.constantFrom(...(s['enum'] as unknown[]));
  const union = (s['anyOf'] ?? s['oneOf']) as Schema[] | undefined;
  if (Array.isArray(union) && union.length > 0)
    return fc.oneof(...union.map((u) => validValue(u, doc, depth + 1)));
  const type = Array.isArray(s['type']) ? (s['type'] as string[]) : [s['type'] as string | undefined];
  const arbs = type.map((t): fc.Arbitrary<unknown> => {
    switch (t) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer': {
        const min = typeof s['minimum'] === 'number' ? s['minimum'] : -1000;
        const max = typeof s['maximum'] === 'number' ? s['maximum'] : min + 100_000;
        return fc.integer({
          min: Math.max(min, Number.MIN_SAFE_INTEGER),
          max: Math.min(max, Number.MAX_SAFE_INTEGER),
        });
      }
      case 'number': {
        const min = typeof s['minimum'] === 'number' ? s['minimum'] : -1e6;
        const max = typeof s['maximum'] === 'number' ? s['maximum'] : 1e6;
        return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
      }
      case 'string':
        return boundedString(s);
      case 'array': {
        const items = (s['items'] as Schema | undefined) ?? {};
        const minLength = typeof s['minItems'] === 'number' ? s['minItems'] : 0;
        const maxLength = Math.min(typeof s['maxItems'] === 'number' ? s['maxItems'] : 3, minLength + 3);
        return fc.array(validValue(items, doc, depth + 1), { minLength, maxLength });
      }
      case 'object': {
        const props = (s['properties'] as Record<string, Schema> | undefined) ?? {};
        const required = (s['required'] as string[] | undefined) ?? [];
        const names = Object.keys(props);
        if (names.length === 0) {
          const additional = s['additionalProperties'];
          if (additional && typeof additional === 'object') {
            const keys = (s['propertyNames'] as Schema | undefined) ?? { type: 'string', maxLength: 12 };
            return fc.dictionary(
              boundedString(resolve(keys, doc)),
              validValue(additional as Schema, doc, depth + 1),
              { maxKeys: 3 },
            );
          }
          return fc.constant({});
        }
        return fc.record(Object.fromEntries(names.map((n) => [n, validValue(props[n]!, doc, depth + 1)])), {
          requiredKeys: required.filter((r) => names.includes(r)),
        });
      }
      case undefined:
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  });
  return arbs.length === 1 ? arbs[0]! : fc.oneof(...arbs);
};

/** Values that are usually invalid against `schema`: wrong types, missing or unknown fields, junk. */
export const invalidValue = (schema: Schema, doc: Schema): fc.Arbitrary<unknown> => {
  const s = resolve(schema, doc);
  const junk = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.string({ maxLength: 40 }),
    fc.constantFrom(
      null,
      -1,
      0,
      Number.MAX_VALUE,
      '',
      '../../etc/passwd',
      '%00',
      '\u0000',
      'NaN',
      [],
      {},
      true,
    ),
  );
  if (s['type'] !== 'object' || !s['properties']) return junk;
  const required = (s['required'] as string[] | undefined) ?? [];
  return fc.oneof(
    junk,
    // A valid object with one field dropped, replaced by junk, or an unknown field added.
    fc
      .tuple(validValue(s, doc), fc.nat(), junk, fc.string({ minLength: 1, maxLength: 8 }))
      .map(([value, i, bad, extra]) => {
        const obj = { ...(value as Record<string, unknown>) };
        const keys = Object.keys(obj);
        const mode = i % 3;
        if (mode === 0 && required.length > 0) delete obj[required[i % required.length]!];
        else if (mode === 1 && keys.length > 0) obj[keys[i % keys.length]!] = bad;
        else obj[`x_${extra}`] = bad;
        return obj;
      }),
  );
};
