// The OpenAPI document against its committed snapshot (test/contract/openapi.snapshot.json), so that a change
// to the API's shape (an operation, a parameter, a schema, a response) is seen and reviewed, never accidental.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { generateOpenApiDocument, type Json, SNAPSHOT_FILE } from '../../scripts/openapi-snapshot.js';

const HOW_TO_UPDATE = "the API's shape changed: review it, then run `npm run openapi:snapshot` and commit the new snapshot";
const SHOWN = 15;

describe('OpenAPI snapshot', () => {
  it('the served document equals test/contract/openapi.snapshot.json', async () => {
    assert.ok(fs.existsSync(SNAPSHOT_FILE), `${SNAPSHOT_FILE} is missing: run \`npm run openapi:snapshot\` and commit it`);
    const expected = JSON.parse(fs.readFileSync(SNAPSHOT_FILE, 'utf8')) as Json;
    const actual = await generateOpenApiDocument();

    const differences = diff(expected, actual, '$');
    if (differences.length > 0) {
      const lines = [HOW_TO_UPDATE, ''];
      const ops = operationChanges(expected, actual);
      if (ops.length > 0) lines.push('Operations:', ...ops.map((o) => `  ${o}`), '');
      const shown = differences.length > SHOWN ? `, the first ${SHOWN}` : '';
      lines.push(`${differences.length} difference(s)${shown} (removed: only in the snapshot; added: only in the served document):`);
      lines.push(...differences.slice(0, SHOWN).map((d) => `  ${d}`));
      assert.fail(lines.join('\n'));
    }
    // The walk above found nothing; this is what it claims.
    assert.deepEqual(actual, expected, HOW_TO_UPDATE);
  });
});

/** Where two JSON values differ, as JSONPath-like paths, snapshot (expected) first. */
function diff(expected: Json, actual: Json, at: string): string[] {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const out: string[] = [];
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      const p = `${at}[${i}]`;
      if (i >= actual.length) out.push(`removed ${p}: ${brief(expected[i])}`);
      else if (i >= expected.length) out.push(`added   ${p}: ${brief(actual[i])}`);
      else out.push(...diff(expected[i], actual[i], p));
    }
    return out;
  }
  if (isObject(expected) && isObject(actual)) {
    const out: string[] = [];
    for (const key of Object.keys(expected)) {
      const p = member(at, key);
      if (!Object.hasOwn(actual, key)) out.push(`removed ${p}: ${brief(expected[key])}`);
      else out.push(...diff(expected[key], actual[key], p));
    }
    for (const key of Object.keys(actual)) {
      if (!Object.hasOwn(expected, key)) out.push(`added   ${member(at, key)}: ${brief(actual[key])}`);
    }
    return out;
  }
  return Object.is(expected, actual) ? [] : [`changed ${at}: ${brief(expected)} -> ${brief(actual)}`];
}

/** Operations added, removed, or renamed (a new operationId on the same method and path). */
function operationChanges(expected: Json, actual: Json): string[] {
  const before = operations(expected);
  const after = operations(actual);
  const out: string[] = [];
  for (const [route, id] of before) {
    if (!after.has(route)) out.push(`removed ${route} (${id})`);
    else if (after.get(route) !== id) out.push(`renamed ${route}: ${id} -> ${after.get(route)}`);
  }
  for (const [route, id] of after) if (!before.has(route)) out.push(`added   ${route} (${id})`);
  return out;
}

function operations(doc: Json): Map<string, string> {
  const out = new Map<string, string>();
  const paths = isObject(doc) && isObject(doc.paths) ? doc.paths : {};
  for (const [p, methods] of Object.entries(paths)) {
    if (!isObject(methods)) continue;
    for (const [method, op] of Object.entries(methods)) {
      out.set(`${method.toUpperCase()} ${p}`, isObject(op) && typeof op.operationId === 'string' ? op.operationId : '<no operationId>');
    }
  }
  return out;
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function member(at: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`;
}

function brief(value: Json): string {
  const text = JSON.stringify(value);
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}
