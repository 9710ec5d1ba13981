// The settings the docs name are the settings the server has, and every value the docs show for
// one is a value the server accepts: a user copies them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, SETTINGS, type RawSettings, type SettingName } from '../../src/config.js';

const root = path.resolve(import.meta.dirname, '../..');
const files = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  'deploy/compose.yaml',
];
const texts = files.map((file) => ({ file, text: fs.readFileSync(path.join(root, file), 'utf8') }));

/** Names the docs use that are not the server's settings, and why. */
const NOT_SETTINGS: Record<string, string> = {
  EDGEPLANE_TEST_DATABASE_URL: "the test suite's PostgreSQL",
  EDGEPLANE_TEST_LOG_LEVEL: "the test suite's server log level",
  EDGEPLANE_API_KEY: 'a shell variable of the quickstart that holds a token',
  EDGEPLANE_API_PORT: "deploy/compose.yaml's host port for the API",
  EDGEPLANE_AGENT_PORT: "deploy/compose.yaml's host port for agents",
  EDGEPLANE_HTTPS_PORT: "deploy/compose.yaml's host port for public HTTPS",
  EDGEPLANE_HTTP_PORT: "deploy/compose.yaml's host port for public HTTP",
};

const byEnvName = new Map<string, SettingName>(Object.entries(SETTINGS).map(([key, [env]]) => [env, key as SettingName]));

/** Where the docs set a setting: `NAME=value` in text and shell, `NAME: value` in YAML. */
function shownValues(): { file: string; name: string; value: string }[] {
  const found: { file: string; name: string; value: string }[] = [];
  for (const { file, text } of texts) {
    const pattern = file.endsWith('.yaml') ? /\b(EDGEPLANE_[A-Z0-9_]+): *'?([^'\s#]+)'?/g : /\b(EDGEPLANE_[A-Z0-9_]+)=([^\s`'"),;]+)/g;
    for (const [, name, raw] of text.matchAll(pattern)) {
      // Compose's own substitutions take their default; a placeholder shows no value.
      const value = raw!.replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');
      if (value === '…' || value.includes('$') || value.includes('<')) continue;
      found.push({ file, name: name!, value });
    }
  }
  return found;
}

/** Settings a shown value needs beside it to load (a pair, or a mode that needs its inputs). */
const COMPANIONS: Partial<Record<SettingName, RawSettings>> = {
  peerAddress: { peerListen: '0.0.0.0:7443' },
  peerListen: { peerAddress: 'edgeplane-1:7443' },
};

describe('the settings the docs show', () => {
  it('are settings of the server, or say what else they are', () => {
    const unknown = new Set<string>();
    for (const { text } of texts)
      for (const [name] of text.matchAll(/\bEDGEPLANE_[A-Z0-9_]+/g)) if (!byEnvName.has(name) && !(name in NOT_SETTINGS)) unknown.add(name);
    assert.deepEqual([...unknown], []);
  });

  it('take each value the docs show for them', () => {
    const shown = shownValues();
    assert.ok(shown.length > 20, `found ${shown.length} shown values`);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-docs-'));
    const refused: string[] = [];
    for (const { file, name, value } of shown) {
      const setting = byEnvName.get(name);
      if (!setting) continue;
      try {
        loadConfig({ dataDir, ...COMPANIONS[setting], [setting]: value }, dataDir);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        refused.push(`${file}: ${name}=${value}: ${error.message}`);
      }
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    assert.deepEqual(refused, []);
  });
});
