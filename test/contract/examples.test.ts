// docs/examples.md is what a fresh server answers to the requests it shows: regenerated from the
// server and compared, so that no example can go stale (scripts/api-examples.ts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { EXAMPLES_FILE, renderExamples } from '../../scripts/api-examples.js';
import { readOnlyResources, securedResources } from '../helpers/secured-resources.js';

describe('docs/examples.md', () => {
  it('is what `npm run docs:examples` writes from a fresh server', { timeout: 120_000 }, async () => {
    const written = await renderExamples();
    const onDisk = fs.readFileSync(EXAMPLES_FILE, 'utf8');
    // Every kind's create and every module has its example.
    for (const kind of securedResources) {
      assert.ok(written.includes(`## \`${kind.path}\`\n`), kind.path);
      for (const name of Object.keys(kind.modules ?? {})) assert.ok(written.includes(`### \`${name}\` of \`${kind.path}\`\n`), `${kind.path} ${name}`);
    }
    for (const kind of readOnlyResources) assert.ok(written.includes(`## \`${kind.path}\` (read only)\n`), kind.path);
    assert.ok(onDisk === written, 'docs/examples.md is stale: run `npm run docs:examples`, review the diff, and commit it');
  });
});
