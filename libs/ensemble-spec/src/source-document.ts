import {
  CST,
  isAlias,
  isCollection,
  isMap,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  parseDocument,
  type Document,
  type Node as YamlNode,
} from 'yaml';
import type { SpecError, SpecWarning } from './errors';
import type { SpecLimits } from './limits';

export type SpecFormat = 'yaml' | 'json';

/** Where a path is in the source. */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/** A loaded document: its plain value and a way back from a path to a line and column. */
export interface SourceDocument {
  readonly value: unknown;
  /**
   * Position of the value at `path` — or, with `key: true`, of its key. Falls back to the nearest
   * parent that exists, so a missing field points at the map that lacks it.
   */
  locate(path: readonly PropertyKey[], options?: { key?: boolean }): SourcePosition | undefined;
  readonly warnings: readonly SpecWarning[];
}

export type LoadResult = { ok: true; doc: SourceDocument } | { ok: false; errors: SpecError[] };

/** UTF-8 length without allocating (the size limit must be checked before anything else). */
export const utf8Length = (s: string): number => {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i += 1;
    } else n += 3;
  }
  return n;
};

/**
 * A linear scan of the lexer's tokens that rejects documents nested far deeper than allowed before
 * the (slower, super-linear on deep input) parser sees them. Counts flow brackets and block
 * indicators on one line (`- - - x`); the exact depth is checked again on the parsed tree.
 */
const prescanDepth = (source: string, maxDepth: number, lineCounter: LineCounter): SpecError | undefined => {
  let flow = 0;
  let lineIndicators = 0;
  let offset = 0;
  for (const token of new Lexer().lex(source)) {
    const type = CST.tokenType(token);
    if (type === 'flow-map-start' || type === 'flow-seq-start') flow += 1;
    else if (type === 'flow-map-end' || type === 'flow-seq-end') flow = Math.max(0, flow - 1);
    else if (type === 'seq-item-ind' || type === 'explicit-key-ind') lineIndicators += 1;
    else if (type === 'newline') lineIndicators = 0;
    if (flow + lineIndicators > maxDepth) {
      const pos = lineCounter.linePos(offset);
      return {
        path: '',
        line: pos.line,
        column: pos.col,
        code: 'TOO_DEEP',
        message: `the document nests deeper than ${maxDepth} levels`,
      };
    }
    // Control tokens (document, flow-end and scalar markers) are not in the source text.
    if (token !== '\x02' && token !== '\x18' && token !== '\x1f') offset += token.length;
  }
  return undefined;
};

/** Exact depth of the composed tree, iteratively (aliases are not followed here). */
const treeDepthError = (doc: Document, maxDepth: number, lineCounter: LineCounter): SpecError | undefined => {
  const stack: [YamlNode, number][] = [];
  if (doc.contents) stack.push([doc.contents, 1]);
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (!isCollection(node)) continue;
    if (depth > maxDepth) {
      const pos = node.range ? lineCounter.linePos(node.range[0]) : undefined;
      return {
        path: '',
        ...(pos ? { line: pos.line, column: pos.col } : {}),
        code: 'TOO_DEEP',
        message: `the document nests deeper than ${maxDepth} levels`,
      };
    }
    for (const item of node.items as unknown[]) {
      if (isMap(node)) {
        const pair = item as { key: unknown; value: unknown };
        if (isCollection(pair.key)) stack.push([pair.key, depth + 1]);
        if (isCollection(pair.value)) stack.push([pair.value, depth + 1]);
      } else if (isCollection(item)) {
        stack.push([item, depth + 1]);
      }
    }
  }
  return undefined;
};

/** Depth of a plain value, iteratively; catches what aliases expand into, including cycles. */
const valueTooDeep = (value: unknown, maxDepth: number): boolean => {
  const stack: [unknown, number][] = [[value, 1]];
  let visited = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > maxDepth) return true;
    // Aliases can only expand so far (maxAliasCount), but guard the walk itself too.
    if (++visited > 1_000_000) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
};

const keyOf = (node: unknown): string | undefined => (isScalar(node) ? String(node.value) : undefined);

/** Loads YAML (or JSON, which is read by the same parser for line and column) within the limits. */
export const loadSource = (source: string, format: SpecFormat, limits: SpecLimits): LoadResult => {
  const bytes = utf8Length(source);
  if (bytes > limits.maxBytes) {
    return {
      ok: false,
      errors: [
        {
          path: '',
          code: 'DOCUMENT_TOO_LARGE',
          message: `the document is ${bytes} bytes; the limit is ${limits.maxBytes}`,
        },
      ],
    };
  }
  const lineCounter = new LineCounter();
  lineCounter.addNewLine(0);
  // The lexer pass needs line starts to report a position; a cheap scan fills them in.
  for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) lineCounter.addNewLine(i + 1);
  const tooDeep = prescanDepth(source, limits.maxDepth, lineCounter);
  if (tooDeep) return { ok: false, errors: [tooDeep] };

  const positionedLines = new LineCounter();
  const doc = parseDocument(source, {
    lineCounter: positionedLines,
    prettyErrors: false,
    uniqueKeys: true,
    strict: true,
    merge: format === 'yaml',
    schema: format === 'json' ? 'json' : 'core',
    version: '1.2',
  });

  const errors: SpecError[] = doc.errors.map((e) => {
    const pos = positionedLines.linePos(e.pos[0]);
    const duplicate = e.code === 'DUPLICATE_KEY';
    const multiple = e.code === 'MULTIPLE_DOCS';
    return {
      path: '',
      line: pos.line,
      column: pos.col,
      code: multiple ? 'MULTIPLE_DOCUMENTS' : 'SYNTAX',
      message: multiple
        ? 'a file holds one spec; remove the other documents (---)'
        : duplicate
          ? 'a key appears twice in the same map'
          : e.message.replace(/ at line \d+, column \d+:?[\s\S]*$/, ''),
    };
  });
  if (errors.length > 0) return { ok: false, errors };

  const deep = treeDepthError(doc, limits.maxDepth, positionedLines);
  if (deep) return { ok: false, errors: [deep] };

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: limits.maxAliasCount });
  } catch (e) {
    const alias = e instanceof ReferenceError && /alias/i.test(e.message);
    return {
      ok: false,
      errors: [
        {
          path: '',
          code: alias ? 'ALIAS_LIMIT' : 'SYNTAX',
          message: alias
            ? `YAML aliases expand past the limit of ${limits.maxAliasCount} nodes (an alias bomb?)`
            : e instanceof Error
              ? e.message
              : 'the document could not be read',
        },
      ],
    };
  }
  if (valueTooDeep(value, limits.maxDepth)) {
    return {
      ok: false,
      errors: [
        {
          path: '',
          code: 'TOO_DEEP',
          message: `aliases expand the document deeper than ${limits.maxDepth} levels`,
        },
      ],
    };
  }

  const warnings: SpecWarning[] = doc.warnings.map((w) => {
    const pos = positionedLines.linePos(w.pos[0]);
    return {
      path: '',
      line: pos.line,
      column: pos.col,
      message: w.message.replace(/ at line \d+, column \d+:?[\s\S]*$/, ''),
    };
  });

  const position = (offset: number | undefined): SourcePosition | undefined => {
    if (offset === undefined) return undefined;
    const p = positionedLines.linePos(offset);
    return { line: p.line, column: p.col };
  };

  const locate = (
    path: readonly PropertyKey[],
    options: { key?: boolean } = {},
  ): SourcePosition | undefined => {
    let node: unknown = doc.contents;
    let found = position((doc.contents as YamlNode | null)?.range?.[0]) ?? { line: 1, column: 1 };
    for (let i = 0; i < path.length; i++) {
      const key = path[i]!;
      if (isAlias(node)) node = node.resolve(doc);
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((p) => keyOf(p.key) === String(key));
        if (!pair) return found;
        const keyPos = position((pair.key as YamlNode | null)?.range?.[0]);
        const valuePos = position((pair.value as YamlNode | null)?.range?.[0]);
        if (last && options.key) return keyPos ?? found;
        found = valuePos ?? keyPos ?? found;
        node = pair.value;
      } else if (isSeq(node) && typeof key === 'number') {
        const item = node.items[key];
        if (item === undefined) return found;
        found = position((item as YamlNode | null)?.range?.[0]) ?? found;
        node = item;
      } else {
        return found;
      }
    }
    return found;
  };

  return { ok: true, doc: { value, locate, warnings } };
};
