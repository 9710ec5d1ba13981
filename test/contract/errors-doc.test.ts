// docs/errors.md and the error catalogue (src/error-catalogue.ts, which gathers every
// `*.errors.ts`) list the same errors: the file is exactly what `npm run docs:errors` writes, every
// code with its status and meaning, no more, no less; and no two entries share a code or a name.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { ERRORS_DOC_FILE, renderErrorsDoc } from '../../scripts/errors-doc.js';
import { entry } from '../../src/core/errors.js';
import { CATALOGUES, ERROR_CATALOGUE, gatherCatalogues } from '../../src/error-catalogue.js';

const ROW = /^\|\s*`?ERR_EP_(\d+)`?\s*\|\s*(\d{3})\s*\|\s*(.+?)\s*\|$/;

function documented(): Map<number, { status: number; meaning: string }> {
  const rows = new Map<number, { status: number; meaning: string }>();
  for (const line of fs.readFileSync(ERRORS_DOC_FILE, 'utf8').split('\n')) {
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
    const codes = ERROR_CATALOGUE.map((e) => e.code);
    assert.equal(new Set(codes).size, codes.length, 'codes are unique');
    const names = ERROR_CATALOGUE.map((e) => e.name);
    assert.equal(new Set(names).size, names.length, 'names are unique');
    const entries = Object.values(CATALOGUES).reduce((n, catalogue) => n + Object.keys(catalogue).length, 0);
    assert.equal(ERROR_CATALOGUE.length, entries, 'every entry of every catalogue is gathered');
  });

  it('gathers every catalogue of every `*.errors.ts` in src', async () => {
    const src = new URL('../../src/', import.meta.url);
    const files = fs.readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.errors.ts'));
    assert.ok(files.length > 10, `found the catalogues (${files.length})`);
    const gathered = new Set(Object.values(CATALOGUES));
    for (const file of files) {
      const exported = Object.entries((await import(new URL(file, src).href)) as Record<string, unknown>).filter(([name]) => name.endsWith('Catalogue'));
      assert.ok(exported.length > 0, `${file} exports a catalogue`);
      for (const [name, catalogue] of exported)
        assert.ok(gathered.has(catalogue as never), `${name} of ${file} is gathered (declare it as a kind's \`errors\`, or list it in src/error-catalogue.ts)`);
    }
  });

  it('refuses, when gathered, two entries with one code or one name', () => {
    const a = entry(9990, 400, 'a', () => 'a');
    const b = entry(9991, 400, 'b', () => 'b');
    assert.throws(() => gatherCatalogues({ one: { a }, two: { b: { ...b, code: 9990 } } }), /ERR_EP_9990 is the code of both one\.a and two\.b/);
    assert.throws(() => gatherCatalogues({ one: { a }, two: { a: b } }), /one\.a and two\.a have the same name/);
    assert.equal(gatherCatalogues({ one: { a }, two: { b } }).length, 2);
  });

  it('is documented in docs/errors.md with the same statuses and meanings', () => {
    const docs = documented();
    const code = ERROR_CATALOGUE.map((e) => [e.code, { status: e.status, meaning: e.meaning }] as const);
    assert.deepEqual(new Map(code), docs);
  });

  it('docs/errors.md is what `npm run docs:errors` writes', () => {
    assert.equal(
      fs.readFileSync(ERRORS_DOC_FILE, 'utf8'),
      renderErrorsDoc(ERROR_CATALOGUE),
      'docs/errors.md is stale: run `npm run docs:errors` and commit it',
    );
  });
});
