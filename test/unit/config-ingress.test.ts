// The data plane's listeners in the config: on by default on loopback next to the API, `off` or host:port each.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, readSettings } from '../../src/config.js';

describe('public ingress listeners in the config', () => {
  it('listen next to the API by default: agents at its port + 1, HTTPS and TLS + 2, HTTP + 3; free ports beside a free port', () => {
    const c = loadConfig({}, '/x');
    assert.deepEqual(c.agentListen, { host: '127.0.0.1', port: 8444 });
    assert.deepEqual(c.ingress, { https: { host: '127.0.0.1', port: 8445 }, http: { host: '127.0.0.1', port: 8446 }, tcpHost: '127.0.0.1' });
    const moved = loadConfig({ listen: '0.0.0.0:9000' }, '/x');
    assert.deepEqual([moved.agentListen?.port, moved.ingress.https?.port, moved.ingress.http?.port], [9001, 9002, 9003]);
    assert.equal(moved.agentListen?.host, '127.0.0.1', 'loopback, whatever the API listens on');
    const free = loadConfig({ listen: '127.0.0.1:0' }, '/x');
    assert.deepEqual([free.agentListen?.port, free.ingress.https?.port, free.ingress.http?.port], [0, 0, 0]);
    const top = loadConfig({ listen: '127.0.0.1:65534' }, '/x');
    assert.deepEqual([top.agentListen?.port, top.ingress.https?.port, top.ingress.http?.port], [65535, 0, 0], 'past 65535: a free port');
  });

  it('read host:port or off from the environment, flags first', () => {
    const env = { EDGEPLANE_INGRESS_HTTPS_LISTEN: '0.0.0.0:443', EDGEPLANE_INGRESS_HTTP_LISTEN: '[::]:80' };
    assert.deepEqual(loadConfig(readSettings(env), '/x').ingress, {
      https: { host: '0.0.0.0', port: 443 },
      http: { host: '::', port: 80 },
      tcpHost: '127.0.0.1',
    });
    assert.deepEqual(loadConfig(readSettings(env, { ingressHttpListen: 'OFF' }), '/x').ingress, {
      https: { host: '0.0.0.0', port: 443 },
      tcpHost: '127.0.0.1',
    });
    assert.deepEqual(loadConfig({ ingressHttpsListen: 'off', ingressHttpListen: 'off', ingressTcpHost: '[::1]' }, '/x').ingress, { tcpHost: '::1' });
    // Port 0 (a free port each) never clashes.
    assert.deepEqual(loadConfig({ listen: '127.0.0.1:0', ingressHttpsListen: '127.0.0.1:0', ingressHttpListen: '127.0.0.1:0' }, '/x').ingress, {
      https: { host: '127.0.0.1', port: 0 },
      http: { host: '127.0.0.1', port: 0 },
      tcpHost: '127.0.0.1',
    });
  });

  it('refuses a bad address, and a port another listener has, with every problem at once', () => {
    assert.throws(
      () => loadConfig({ ingressHttpsListen: 'nowhere', ingressHttpListen: '127.0.0.1:8443', ingressTcpHost: 'localhost' }, '/x'),
      (err: ConfigError) => {
        assert.equal(err.problems.length, 3);
        assert.match(err.problems[0]!, /^EDGEPLANE_INGRESS_HTTPS_LISTEN must be host:port with a port from 0 to 65535, or off; got 'nowhere'$/);
        assert.match(err.problems[1]!, /^EDGEPLANE_INGRESS_HTTP_LISTEN \(127\.0\.0\.1:8443\) is the address of EDGEPLANE_LISTEN/);
        assert.match(err.problems[2]!, /^EDGEPLANE_INGRESS_TCP_HOST must be an IP address; got 'localhost'$/);
        return true;
      },
    );
    assert.throws(
      () => loadConfig({ ingressHttpListen: '127.0.0.1:8445' }, '/x'),
      /EDGEPLANE_INGRESS_HTTP_LISTEN \(127\.0\.0\.1:8445\) is the address of EDGEPLANE_INGRESS_HTTPS_LISTEN/,
    );
    assert.throws(() => loadConfig({ agentListen: '127.0.0.1:8443' }, '/x'), /EDGEPLANE_AGENT_LISTEN \(127\.0\.0\.1:8443\) is the address of EDGEPLANE_LISTEN/);
  });

  it('take the public ports URLs name, and the peer listener with the address peers dial', () => {
    const c = loadConfig(readSettings({ EDGEPLANE_PUBLIC_HTTPS_PORT: '443', EDGEPLANE_PEER_LISTEN: '10.0.0.5:7443' }), '/x');
    assert.deepEqual(c.ingress.publicPorts, { https: 443 });
    assert.deepEqual(c.peer, { listen: { host: '10.0.0.5', port: 7443 } });
    const named = loadConfig(readSettings({ EDGEPLANE_PEER_LISTEN: '0.0.0.0:7443', EDGEPLANE_PEER_ADDRESS: 'edgeplane-2:7443' }), '/x');
    assert.deepEqual(named.peer, { listen: { host: '0.0.0.0', port: 7443 }, address: 'edgeplane-2:7443' });
    assert.equal(loadConfig({}, '/x').peer, undefined, 'off by default');
    assert.throws(
      () => loadConfig(readSettings({ EDGEPLANE_PUBLIC_HTTP_PORT: '0', EDGEPLANE_PEER_LISTEN: '0.0.0.0:7443' }), '/x'),
      (err: ConfigError) => {
        assert.match(err.problems.join('\n'), /EDGEPLANE_PUBLIC_HTTP_PORT must be a port from 1 to 65535; got '0'/);
        assert.match(err.problems.join('\n'), /EDGEPLANE_PEER_ADDRESS must say how other instances reach this one/);
        return true;
      },
    );
    assert.throws(() => loadConfig(readSettings({ EDGEPLANE_PEER_ADDRESS: 'x:1' }), '/x'), /EDGEPLANE_PEER_ADDRESS needs EDGEPLANE_PEER_LISTEN/);
  });
});
