// docs/errors.md and the catalogue in src/core/errors.ts list the same errors: every code with
// its status and meaning, no more, no less.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { catalogue } from '../../src/core/errors.js';

const ROW = /^\|\s*`?ERR_EP_(\d+)`?\s*\|\s*(\d{3})\s*\|\s*(.+?)\s*\|$/;

function documented(): Map<number, { status: number; meaning: string }> {
  const rows = new Map<number, { status: number; meaning: string }>();
  for (const line of fs.readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8').split('\n')) {
    const m = ROW.exec(line.trim());
    if (!m) continue;
    const code = Number(m[1]);
    assert.ok(!rows.has(code), `ERR_EP_${code} is listed twice in docs/errors.md`);
    rows.set(code, { status: Number(m[2]), meaning: m[3]! });
  }
  return rows;
}

describe('error catalogue', () => {
  it('has one code per entry', () => {
    const codes = Object.values(catalogue).map((e) => e.code);
    assert.equal(new Set(codes).size, codes.length, 'codes are unique');
  });

  it('is documented in docs/errors.md with the same statuses and meanings', () => {
    const docs = documented();
    const code = Object.values(catalogue).map((e) => [e.code, { status: e.status, meaning: e.meaning }] as const);
    assert.deepEqual(new Map(code), docs);
  });
});
