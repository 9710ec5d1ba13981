// The bounds of a traffic_policy document's shape (1970): what the lexer counts before the text is
// parsed, and what one walk over the parsed document counts before it becomes data. Kept apart
// from the parse itself (document.ts) because each limit answers a cost of the YAML parser.
import { CST, Lexer, LineCounter, isAlias, isMap, isScalar, isSeq, type Document } from 'yaml';
import type { ApiError } from '../../core/errors.js';
import { trafficPolicyErrors } from './traffic-policy.errors.js';

/**
 * The limits of a document's shape (1970). Parsing YAML costs time in proportion to its tokens
 * (a few microseconds each), and some shapes cost more: deep nesting, many anchors or tags on one
 * node, aliases that repeat a large part. So the text is lexed first, which is cheap and stops at
 * the first limit, and only then parsed; the parsed document is then walked once (keys per
 * mapping, duplicate keys, values with what aliases repeat) before it becomes data.
 */
export const DOCUMENT_LIMITS = { tokens: 20_000, depth: 32, anchors: 100, aliases: 100, tags: 100, values: 10_000, keysPerMapping: 1_000 } as const;

const tooComplex = (problem: string) => trafficPolicyErrors.policyDocumentTooComplex({ problem });

/** The lexer's markers, which stand for no text of the source. */
const MARKERS = new Set(['\x02', '\x18', '\x1f']);

/**
 * Counts what parsing would cost, from the tokens alone; throws 1970 at the first limit. Nesting
 * is told from the brackets of flow style, and in block style from the columns where nodes start
 * (the first of a line, each `-` and `?`): one deeper than every open one is inside them all. The
 * parser recurses once per level, and overflows its stack at some thousands.
 */
export function checkTokens(text: string): void {
  const { tokens: maxTokens, depth: maxDepth } = DOCUMENT_LIMITS;
  let tokens = 0;
  let depth = 0;
  let offset = 0;
  /** The columns of the open block nodes, and where the current line starts. */
  const columns: number[] = [];
  let lineStart = 0;
  let atLineStart = true;
  const tooDeep = () => tooComplex(`nests lists and mappings more than ${maxDepth} levels deep at ${placeIn(text, offset)}`);
  const counts = { anchor: 0, alias: 0, tag: 0 };
  const limit = { anchor: 'anchors', alias: 'aliases', tag: 'tags' } as const;
  const shown = { anchor: 'anchors (&name)', alias: 'aliases (*name)', tag: 'tags (!tag)' } as const;
  for (const token of new Lexer().lex(text)) {
    if (MARKERS.has(token)) continue;
    if (++tokens > maxTokens)
      throw tooComplex(`has more than ${maxTokens} tokens (keys, values, punctuation, indentation, comments and line breaks each count); make it shorter`);
    const type = CST.tokenType(token);
    if (type === 'newline') {
      atLineStart = true;
      lineStart = offset + token.length;
    } else if (type !== 'space' && type !== 'comment') {
      if (depth === 0 && (atLineStart || type === 'seq-item-ind' || type === 'explicit-key-ind')) {
        const column = offset - lineStart;
        while (columns.length > 0 && columns[columns.length - 1]! >= column) columns.pop();
        columns.push(column);
        if (columns.length > maxDepth) throw tooDeep();
      }
      atLineStart = false;
    }
    if (type === 'flow-map-start' || type === 'flow-seq-start') {
      if (++depth + columns.length > maxDepth) throw tooDeep();
    } else if (type === 'flow-map-end' || type === 'flow-seq-end') depth = Math.max(0, depth - 1);
    else if (type === 'anchor' || type === 'alias' || type === 'tag') {
      const max = DOCUMENT_LIMITS[limit[type]];
      if (++counts[type] > max) throw tooComplex(`has more than ${max} ${shown[type]}; the one at ${placeIn(text, offset)} is one too many`);
    }
    offset += token.length;
  }
}

/** "line L, column C" of an offset into the text, before it is parsed (once, for an error). */
function placeIn(text: string, offset: number): string {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) line++;
  return `line ${line}, column ${offset - (text.lastIndexOf('\n', offset - 1) + 1) + 1}`;
}

/** "line L, column C" of an offset into the document, from the lines its parse counted. */
export function place(lines: LineCounter, offset: number): string {
  const { line, col } = lines.linePos(offset);
  return `line ${line}, column ${col}`;
}

/**
 * One walk over the parsed document: nesting depth, keys per mapping and keys given twice, and the
 * values, counting again those an alias repeats (checking the data visits them again). Linear:
 * keys are compared through a set, and an alias adds what its anchor held, counted once.
 */
export function checkShape(doc: Document, lines: LineCounter, duplicate: (at: string) => ApiError): void {
  const { depth: maxDepth, values: maxValues, keysPerMapping } = DOCUMENT_LIMITS;
  const anchored = new Map<string, number>();
  let values = 0;
  const count = (added: number, node: { range?: readonly number[] | null }) => {
    values += added;
    if (values > maxValues)
      throw tooComplex(
        `has more than ${maxValues} values (keys, scalars, lists and mappings, and again each one an alias repeats) at ${place(lines, node.range?.[0] ?? 0)}`,
      );
  };
  const walk = (node: unknown, depth: number): void => {
    if (isAlias(node)) {
      count(anchored.get(node.source) ?? 1, node);
      return;
    }
    if (!isScalar(node) && !isMap(node) && !isSeq(node)) return;
    const before = values;
    count(1, node);
    if (isMap(node) || isSeq(node)) {
      if (depth > maxDepth) throw tooComplex(`nests lists and mappings more than ${maxDepth} levels deep at ${place(lines, node.range?.[0] ?? 0)}`);
      if (isMap(node)) {
        if (node.items.length > keysPerMapping)
          throw tooComplex(`has a mapping of ${node.items.length} keys at ${place(lines, node.range?.[0] ?? 0)}; at most ${keysPerMapping} are allowed in one`);
        const keys = new Set<string>();
        for (const pair of node.items) {
          // Keys that are equal once they are the data's (1 and "1" alike) are one key given twice.
          if (isScalar(pair.key)) {
            const key = String(pair.key.value);
            if (keys.has(key)) throw duplicate(place(lines, pair.key.range?.[0] ?? 0));
            keys.add(key);
          }
          walk(pair.key, depth + 1);
          walk(pair.value, depth + 1);
        }
      } else for (const item of node.items) walk(item, depth + 1);
    }
    if (node.anchor) anchored.set(node.anchor, values - before);
  };
  walk(doc.contents, 1);
}
