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

  // The image (Dockerfile) and `npm ci --omit=dev` install `dependencies` only: a package the
  // built server loads at run time must be among them, not among the devDependencies.
  it('every package the server imports at run time is a production dependency', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const sources = fs.readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    assert.ok(sources.length > 50, `found ${sources.length} source files`);
    const missing = new Set<string>();
    for (const file of sources) {
      const text = fs.readFileSync(path.join(root, 'src', file), 'utf8');
      // Static imports and re-exports that are not type-only, and dynamic imports.
      const specifiers = [
        ...text.matchAll(/^(?:import|export)(?!\s+type\s)[^;]*?\sfrom\s+'([^']+)'/gms),
        ...text.matchAll(/^import\s+'([^']+)'/gm),
        ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
      ].map((m) => m[1]!);
      for (const specifier of specifiers) {
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        if (!(name in pkg.dependencies)) missing.add(`${name} (src/${file})`);
      }
    }
    assert.deepEqual([...missing], []);
  });
});
