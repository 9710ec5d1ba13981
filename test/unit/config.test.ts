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

  it('turns the agent listener off with off, and reads it with optional TLS files', () => {
    assert.equal(loadConfig({ agentListen: 'OFF' }, '/x').agentListen, undefined);
    assert.deepEqual(loadConfig({ agentListen: '0.0.0.0:0' }, '/x').agentListen, { host: '0.0.0.0', port: 0 });
    assert.deepEqual(
      loadConfig(readSettings({ EDGEPLANE_AGENT_LISTEN: '[::]:4443', EDGEPLANE_AGENT_TLS_CERT: 'a.pem', EDGEPLANE_AGENT_TLS_KEY: 'a.key' }), '/x').agentListen,
      {
        host: '::',
        port: 4443,
        tls: { cert: '/x/a.pem', key: '/x/a.key' },
      },
    );
    assert.throws(
      () => loadConfig({ agentListen: 'nowhere', agentTlsCert: 'a.pem' }, '/x'),
      (err: ConfigError) => {
        assert.equal(err.problems.length, 2);
        assert.match(err.problems.join('\n'), /EDGEPLANE_AGENT_LISTEN must be host:port/);
        assert.match(err.problems.join('\n'), /EDGEPLANE_AGENT_TLS_CERT and EDGEPLANE_AGENT_TLS_KEY must be given together/);
        return true;
      },
    );
    assert.throws(() => loadConfig({ agentListen: 'off', agentTlsCert: 'a.pem', agentTlsKey: 'a.key' }, '/x'), /need the agent listener/);
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

  it('limits slow clients and connections by default, in seconds as configured', () => {
    assert.deepEqual(loadConfig({}).connections, { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, max: 1000 });
    const settings = readSettings({
      EDGEPLANE_HEADERS_TIMEOUT: '2.5',
      EDGEPLANE_REQUEST_TIMEOUT: '60',
      EDGEPLANE_KEEPALIVE_TIMEOUT: '75',
      EDGEPLANE_MAX_CONNECTIONS: '20',
    });
    assert.deepEqual(loadConfig(settings).connections, { headersTimeoutMs: 2500, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 75_000, max: 20 });
    assert.equal(readSettings({}, { keepAliveTimeout: '9' }).keepAliveTimeout, '9');
  });

  it('refuses limits that are not positive numbers or whole connections, or a headers timeout above the request timeout', () => {
    for (const [name, value] of [
      ['requestTimeout', '0'],
      ['requestTimeout', '-1'],
      ['headersTimeout', '1e3'],
      ['keepAliveTimeout', '5s'],
      ['keepAliveTimeout', '0.0005'],
      ['maxConnections', '0'],
      ['maxConnections', '1.5'],
      ['maxConnections', 'many'],
    ] as const) {
      assert.throws(
        () => loadConfig({ [name]: value }),
        (e: unknown) => e instanceof ConfigError && e.problems.length === 1 && e.problems[0]!.includes(`'${value}'`),
        `${name}=${value}`,
      );
    }
    assert.throws(
      () => loadConfig({ headersTimeout: '40' }),
      (e: unknown) => e instanceof ConfigError && /EDGEPLANE_HEADERS_TIMEOUT .*EDGEPLANE_REQUEST_TIMEOUT/.test(e.problems.join()),
    );
  });

  it('reports every problem at once', () => {
    assert.throws(
      () => loadConfig({ listen: 'localhost', logLevel: 'loud', databaseUrl: 'mysql://x', tlsCert: 'c.pem', baseUrl: 'ftp://x' }),
      (e: unknown) => e instanceof ConfigError && e.problems.length === 5,
    );
  });
});

describe('database timeouts in the config', () => {
  it('default to 5 s each', () => {
    assert.deepEqual(loadConfig({}).databaseTimeouts, { statementMs: 5000, poolMs: 5000 });
  });

  it('read seconds, to the millisecond, from the environment or a flag', () => {
    const settings = readSettings({ EDGEPLANE_DATABASE_STATEMENT_TIMEOUT: '0.5', EDGEPLANE_DATABASE_POOL_TIMEOUT: '30' }, { databasePoolTimeout: '2.25' });
    assert.deepEqual(loadConfig(settings).databaseTimeouts, { statementMs: 500, poolMs: 2250 });
  });

  it('refuses anything but a number of seconds greater than 0, with every problem at once', () => {
    for (const bad of ['0', '0.0', '-1', '5s', '1e3', 'abc', '0.0001', '1.2345', '99999999']) {
      assert.throws(
        () => loadConfig({ databaseStatementTimeout: bad, databasePoolTimeout: bad }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.problems.length === 2 &&
          e.problems[0]!.startsWith('EDGEPLANE_DATABASE_STATEMENT_TIMEOUT must be a number of seconds greater than 0') &&
          e.problems[1]!.includes(`EDGEPLANE_DATABASE_POOL_TIMEOUT`) &&
          e.problems[1]!.includes(`got '${bad}'`),
        bad,
      );
    }
  });

  it('has domain settings by default, so that npm start needs none', () => {
    assert.deepEqual(loadConfig({}).domains, {
      serviceDomains: ['edgeplane.app'],
      cnameZone: 'edgeplane-cname.app',
      acmeChallengeZone: 'edgeplane-acme.app',
      nameservers: ['ns1.edgeplane.app.', 'ns2.edgeplane.app.'],
      regions: ['us', 'eu', 'ap', 'au', 'sa', 'jp', 'in'],
      tcpAddresses: [{ host: '1.tcp.edgeplane.app', from: 10000, to: 65535 }],
    });
  });

  it('reads domain settings into their stored form: lower case, A-labels, nameservers with a trailing dot', () => {
    const settings = readSettings({
      EDGEPLANE_SERVICE_DOMAINS: 'Tunnels.Example.com, bücher.example',
      EDGEPLANE_CNAME_ZONE: 'cname.example.net.',
      EDGEPLANE_ACME_CHALLENGE_ZONE: 'acme.example.net',
      EDGEPLANE_AGENT_INGRESS_NAMESERVERS: 'ns-a.example.net., ns-b.example.net',
      EDGEPLANE_REGIONS: 'EU,us',
      EDGEPLANE_TCP_ADDRESSES: '1.TCP.example.net:20000-20099, 2.tcp.example.net:30000',
    });
    assert.deepEqual(loadConfig(settings).domains, {
      serviceDomains: ['tunnels.example.com', 'xn--bcher-kva.example'],
      cnameZone: 'cname.example.net',
      acmeChallengeZone: 'acme.example.net',
      nameservers: ['ns-a.example.net.', 'ns-b.example.net.'],
      regions: ['eu', 'us'],
      tcpAddresses: [
        { host: '1.tcp.example.net', from: 20000, to: 20099 },
        { host: '2.tcp.example.net', from: 30000, to: 30000 },
      ],
    });
  });

  it('reports every bad domain setting at once', () => {
    const settings = readSettings({
      EDGEPLANE_SERVICE_DOMAINS: 'com,ok.example,a_b.example',
      EDGEPLANE_CNAME_ZONE: 'bad..zone',
      EDGEPLANE_ACME_CHALLENGE_ZONE: '*.acme.example',
      EDGEPLANE_AGENT_INGRESS_NAMESERVERS: ' , ',
      EDGEPLANE_REGIONS: 'us,mars',
      EDGEPLANE_TCP_ADDRESSES: 'tcp.example.net:2000-1000,tcp.example.net:100-200,tcp.example.net:150,nohost',
    });
    assert.throws(
      () => loadConfig(settings),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        const text = e.problems.join('\n');
        for (const part of [
          "'com'",
          "'a_b.example'",
          'EDGEPLANE_CNAME_ZONE',
          'EDGEPLANE_ACME_CHALLENGE_ZONE',
          'EDGEPLANE_AGENT_INGRESS_NAMESERVERS',
          "'mars'",
          "'tcp.example.net:2000-1000'",
          "'tcp.example.net:150' overlaps",
          "'nohost'",
        ])
          assert.ok(text.includes(part), `${part} is reported in:\n${text}`);
        assert.ok(!text.includes('ok.example'), 'a good value is not reported');
        assert.equal(e.problems.length, 9);
        return true;
      },
    );
  });
});

describe('run mode in the config', () => {
  it('runs the API and the job runner by default, either alone by EDGEPLANE_RUN_MODE or --run-mode', () => {
    assert.equal(loadConfig({}).runMode, 'all');
    assert.equal(loadConfig(readSettings({ EDGEPLANE_RUN_MODE: 'worker' })).runMode, 'worker');
    assert.equal(loadConfig(readSettings({ EDGEPLANE_RUN_MODE: 'worker' }, { runMode: 'API' })).runMode, 'api');
  });

  it('refuses an unknown run mode, naming the choices, along with the other problems', () => {
    assert.throws(
      () => loadConfig(readSettings({ EDGEPLANE_RUN_MODE: 'bogus', EDGEPLANE_LISTEN: 'nowhere' })),
      (e: unknown) =>
        e instanceof ConfigError && e.problems.length === 2 && e.problems.includes("EDGEPLANE_RUN_MODE must be one of api, worker, all; got 'bogus'"),
    );
  });
});

describe('config problems never echo a password', () => {
  it('shows URLs with their user and password replaced, and refuses a base URL with credentials', () => {
    assert.throws(
      () =>
        loadConfig({
          databaseUrl: 'mysql://admin:db-s3cret@db.internal/ep',
          baseUrl: 'https://ops:base-s3cret@api.example.com',
          acmeDirectoryUrl: 'ftp://acme:acme-s3cret@ca.internal/dir',
        }),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        const text = e.problems.join('\n');
        for (const secret of ['db-s3cret', 'base-s3cret', 'acme-s3cret', 'admin', 'ops:', 'acme:']) assert.ok(!text.includes(secret), `${secret} in ${text}`);
        assert.ok(e.problems.includes("EDGEPLANE_DATABASE_URL must start with postgres:// or sqlite:; got 'mysql://***@db.internal/ep'"), text);
        assert.ok(
          e.problems.includes("EDGEPLANE_BASE_URL must be an absolute http(s) address without query or credentials; got 'https://***@api.example.com'"),
          text,
        );
        assert.ok(e.problems.includes("EDGEPLANE_ACME_DIRECTORY_URL must be an absolute http(s) address; got 'ftp://***@ca.internal/dir'"), text);
        return true;
      },
    );
  });
});

describe('certificate settings in the config', () => {
  it("orders from Let's Encrypt through the system's resolver, with no listener, by default", () => {
    const c = loadConfig({}).certificates;
    assert.equal(c.acmeDirectoryUrl, 'https://acme-v02.api.letsencrypt.org/directory');
    assert.deepEqual([c.acmeEab, c.acmeCaFile, c.dnsResolver, c.http01Listen, c.dnsListen], [undefined, undefined, undefined, undefined, undefined]);
  });

  it('reads every setting by its documented variable', () => {
    const c = loadConfig(
      readSettings({
        EDGEPLANE_ACME_DIRECTORY_URL: 'https://127.0.0.1:14000/dir',
        EDGEPLANE_ACME_EAB_KID: 'kid-1',
        EDGEPLANE_ACME_EAB_HMAC_KEY: 'zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W',
        EDGEPLANE_ACME_CA_FILE: 'pebble.pem',
        EDGEPLANE_ACME_EMAIL: 'ops@example.com',
        EDGEPLANE_DNS_RESOLVER: '127.0.0.1:8053',
        EDGEPLANE_HTTP01_LISTEN: '0.0.0.0:80',
        EDGEPLANE_DNS_LISTEN: '[::]:53',
      }),
      '/srv',
    ).certificates;
    assert.deepEqual(c, {
      acmeDirectoryUrl: 'https://127.0.0.1:14000/dir',
      acmeEab: { kid: 'kid-1', hmacKey: 'zWNDZM6eQGHWpSRTPal5eIUYFTu7EajVIoguysqZ9wG44nMEtx3MUAsUDkMTQ12W' },
      acmeCaFile: '/srv/pebble.pem',
      acmeEmail: 'ops@example.com',
      dnsResolver: { host: '127.0.0.1', port: 8053 },
      http01Listen: { host: '0.0.0.0', port: 80 },
      dnsListen: { host: '::', port: 53 },
    });
    assert.deepEqual(loadConfig({ dnsResolver: '1.1.1.1' }).certificates.dnsResolver, { host: '1.1.1.1', port: 53 });
  });

  it('refuses a bad directory, half an EAB, a resolver by name and a bad listen address, all at once', () => {
    assert.throws(
      () => loadConfig({ acmeDirectoryUrl: 'letsencrypt', acmeEabKid: 'kid', dnsResolver: 'dns.google', http01Listen: '80', dnsListen: 'localhost:70000' }),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.problems.length === 5 &&
        e.problems.some((p) => p.startsWith('EDGEPLANE_ACME_DIRECTORY_URL must be an absolute http(s) address')) &&
        e.problems.includes('EDGEPLANE_ACME_EAB_KID and EDGEPLANE_ACME_EAB_HMAC_KEY must be given together') &&
        e.problems.some((p) => p.startsWith('EDGEPLANE_DNS_RESOLVER must be an IP address')) &&
        e.problems.some((p) => p.startsWith('EDGEPLANE_HTTP01_LISTEN must be host:port')) &&
        e.problems.some((p) => p.startsWith('EDGEPLANE_DNS_LISTEN must be host:port')),
    );
  });
});
