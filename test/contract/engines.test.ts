// Every installed package accepts the Node.js that runs the suite, and so does edgeplane's own
// `engines`: CI runs this on each supported version (20, 22, 24), so a dependency that drops one
// of them (cookie 2 needed Node 22) fails here instead of warning at install.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import semver from 'semver';

const root = path.resolve(import.meta.dirname, '../..');
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; dev?: boolean; optional?: boolean }>;
};

describe('engines', () => {
  it(`edgeplane's engines accept this Node.js (${process.version})`, () => {
    const own = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node as string;
    assert.ok(semver.satisfies(process.version, own), `${process.version} is outside ${own}`);
  });

  it('every package in the lock file accepts this Node.js', () => {
    const refused = Object.entries(lock.packages)
      .filter(([where, p]) => where !== '' && !Array.isArray(p.engines) && p.engines?.node)
      .filter(([, p]) => !semver.satisfies(process.version, (p.engines as { node: string }).node, { includePrerelease: true }))
      .map(([where, p]) => `${where.replace(/^node_modules\//, '')}@${p.version} needs node ${(p.engines as { node: string }).node}`);
    assert.deepEqual(refused, []);
  });
});
