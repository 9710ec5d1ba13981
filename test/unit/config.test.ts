import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, readSettings } from '../../src/config.js';

describe('config', () => {
  it('defaults to SQLite in ./data and HTTPS on 127.0.0.1:8443', () => {
    const c = loadConfig({}, '/srv/ep');
    assert.deepEqual(c.database, { kind: 'sqlite', file: path.join('/srv/ep/data', 'edgeplane.db') });
    assert.deepEqual(c.listen, { host: '127.0.0.1', port: 8443 });
    assert.equal(c.baseUrl, 'https://127.0.0.1:8443');
    assert.deepEqual(c.tls, { mode: 'auto' });
    assert.equal(c.bootstrap, true);
  });

  it('selects PostgreSQL by URL, plain HTTP with EDGEPLANE_TLS=off, and files for TLS', () => {
    const settings = readSettings({ EDGEPLANE_DATABASE_URL: 'postgres://u@h/db', EDGEPLANE_TLS: 'off', EDGEPLANE_LISTEN: '[::1]:9000' });
    const c = loadConfig(settings, '/x');
    assert.deepEqual(c.database, { kind: 'postgres', url: 'postgres://u@h/db' });
    assert.equal(c.baseUrl, 'http://[::1]:9000');
    const files = loadConfig({ tlsCert: 'c.pem', tlsKey: 'k.pem' }, '/x');
    assert.deepEqual(files.tls, { mode: 'files', cert: '/x/c.pem', key: '/x/k.pem' });
  });

  it('lets flags override the environment', () => {
    const s = readSettings({ EDGEPLANE_LISTEN: '127.0.0.1:1' }, { listen: '127.0.0.1:2' });
    assert.equal(s.listen, '127.0.0.1:2');
  });

  it('keeps an explicit base URL without its trailing slash', () => {
    assert.equal(loadConfig({ baseUrl: 'https://api.example.com/' }).baseUrl, 'https://api.example.com');
  });

  it('reads trusted proxies as IPs or CIDRs in network form', () => {
    assert.deepEqual(loadConfig({ trustedProxies: '10.0.0.7, 192.168.0.0/16,::1' }).trustedProxies, ['10.0.0.7/32', '192.168.0.0/16', '::1/128']);
    assert.deepEqual(loadConfig({}).trustedProxies, []);
    assert.throws(
      () => loadConfig({ trustedProxies: '10.0.0.1/8,nope' }),
      (e: unknown) => e instanceof ConfigError && e.problems.length === 2 && /did you mean 10\.0\.0\.0\/8/.test(e.problems[0]!),
    );
  });

  it('reports every problem at once', () => {
    assert.throws(
      () => loadConfig({ listen: 'localhost', logLevel: 'loud', databaseUrl: 'mysql://x', tlsCert: 'c.pem', baseUrl: 'ftp://x' }),
      (e: unknown) => e instanceof ConfigError && e.problems.length === 5,
    );
  });
});
