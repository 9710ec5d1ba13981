// A traffic_policy module's value: a string holding a JSON or YAML document, bounded in bytes and
// in shape (document-bounds.ts) before it is parsed, and parsed into the data its rules are
// checked on. Errors are the document's own (2212) or its shape's (1970).
import { LineCounter, parseDocument } from 'yaml';
import { checkShape, checkTokens, place } from './document-bounds.js';
import { clip, jsonType } from './values.js';
import { trafficPolicyErrors } from './traffic-policy.errors.js';

/** The largest traffic_policy document, in UTF-8 bytes. */
export const MAX_DOCUMENT_BYTES = 256 * 1024;

/** The document as data: JSON when it starts with `{`, YAML otherwise. Throws 2212 or 1970. */
export function parsePolicyDocument(value: unknown): unknown {
  if (typeof value !== 'string')
    throw trafficPolicyErrors.invalidPolicyDocument({ problem: `must be a string holding a JSON or YAML document; got ${jsonType(value)}` });
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_DOCUMENT_BYTES)
    throw trafficPolicyErrors.invalidPolicyDocument({ problem: `is ${bytes} bytes long; at most ${MAX_DOCUMENT_BYTES} are allowed` });
  const text = value.replace(/^\uFEFF/, '');
  const lines = new LineCounter();
  // Bounded first, whatever the form: even JSON.parse takes tens of milliseconds on the largest.
  checkTokens(text);
  if (/^\s*\{/.test(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch (error) {
      throw trafficPolicyErrors.invalidPolicyDocument({ problem: `is not valid JSON: ${clip(String((error as Error).message).split('\n')[0]!, 160)}` });
    }
    // JSON.parse keeps the last of two equal keys, so what is checked would not be all that is
    // stored (and echoed): a key given twice is refused, as YAML refuses it. JSON is YAML, whose
    // parse gives each key its place; the same limits hold.
    const doc = parseDocument(text, { uniqueKeys: false, lineCounter: lines });
    checkShape(doc, lines, (at) => trafficPolicyErrors.invalidPolicyDocument({ problem: `has a key given twice at ${at}; give each key once` }));
    return parsed;
  }
  let doc: ReturnType<typeof parseDocument>;
  try {
    // Keys given twice are found by checkShape: the parser's own check compares each key with
    // every other of its mapping, seconds for a mapping of thousands.
    doc = parseDocument(text, { prettyErrors: false, uniqueKeys: false, strict: true, lineCounter: lines });
  } catch (error) {
    throw trafficPolicyErrors.invalidPolicyDocument({ problem: `is not valid YAML: ${clip(String((error as Error).message).split('\n')[0]!, 160)}` });
  }
  const [first] = doc.errors;
  if (first)
    throw trafficPolicyErrors.invalidPolicyDocument({
      problem: `is not valid YAML at ${place(lines, first.pos[0])}: ${clip(first.message.split('\n')[0]!, 160)}`,
    });
  checkShape(doc, lines, (at) => trafficPolicyErrors.invalidPolicyDocument({ problem: `is not valid YAML at ${at}: Map keys must be unique` }));
  try {
    return doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    throw trafficPolicyErrors.invalidPolicyDocument({
      problem: `is not a usable YAML document: ${clip(String((error as Error).message).split('\n')[0]!, 160)}`,
    });
  }
}
