// Many instances on one store route to each other's agents: a public request that reaches
// instance B or C for an agent connected to instance A is carried to A over a peer link, with the
// endpoint's own modules enforced where it arrived, and an edge's tunnel group backend finds
// labeled tunnels on any instance. The links take only peers that hold the master key.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { after, before, test } from 'node:test';
import tls from 'node:tls';
import ngrok from '@ngrok/ngrok';
import { describeEachStore, type Harness, type Instance } from '../helpers/harness.js';
import { created, edgeWithRoute, edgesRead, request } from '../edges/helpers.js';

/** The harness as seen through another instance's listeners. */
const through = (h: Harness, other: Instance): Harness => ({ ...h, agents: other.agents! });

/** An upstream that answers with its name, the path and the size of the body it received. */
async function namedUpstream(name: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => res.end(`${name} ${req.url} ${bytes}`));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function agentOn(h: Harness, token: string): Promise<ngrok.Session> {
  return new ngrok.SessionBuilder().authtoken(token).serverAddr(`127.0.0.1:${h.agents!.port}`).caCert(Buffer.from(h.agents!.caPem)).connect();
}

describeEachStore(
  'routing between instances',
  (h) => {
    let b: Instance;
    let c: Instance;
    before(async () => {
      // Each on a loopback address of its own for TCP endpoints: all three listen on one port.
      b = await h().secondInstance({ agents: true, tcpHost: '127.0.0.2' });
      c = await h().secondInstance({ agents: true, tcpHost: '127.0.0.3' });
    });
    after(async () => {
      await b?.close();
      await c?.close();
    });

    test('a request reaching B or C is served by the agent connected to A, and stops when the agent leaves', async () => {
      const api = await h().newAccount();
      const cred = await created(api, '/credentials', { description: 'instances' });
      const up = await namedUpstream('upstream');
      const session = await agentOn(h(), cred.token as string);
      try {
        const boundAt = Date.now();
        const listener = await session.httpEndpoint().listenAndForward(`http://127.0.0.1:${up.port}`);
        const url = listener.url()!;
        const host = new URL(url).hostname;
        for (const other of [b, c]) await other.agents!.routed(url);
        const seenAfter = Date.now() - boundAt;
        if (h().kind === 'postgres') assert.ok(seenAfter < 1000, `told within a second on PostgreSQL (took ${seenAfter} ms)`);

        for (const other of [b, c]) {
          const answer = await request(through(h(), other), host, '/hello');
          assert.equal(answer.status, 200);
          assert.equal(answer.text, 'upstream /hello 0');
        }
        // Several at once on one link, one with a body larger than a stream's window.
        const body = randomBytes(1024 * 1024);
        const answers = await Promise.all([
          request(through(h(), b), host, '/big', { method: 'POST', body }),
          ...Array.from({ length: 20 }, (_, i) => request(through(h(), b), host, `/n${i}`)),
        ]);
        assert.equal(answers[0]!.text, `upstream /big ${body.length}`);
        answers.slice(1).forEach((a, i) => assert.equal(a.text, `upstream /n${i} 0`));
        await listener.close();
        await b.agents!.routed(url, { gone: true });
        assert.equal((await request(through(h(), b), host, '/')).status, 404);
      } finally {
        await session.close();
        await up.close();
      }
    });

    test("an endpoint's own options are enforced on the instance a request reaches", async () => {
      const api = await h().newAccount();
      const cred = await created(api, '/credentials', { description: 'instances' });
      const up = await namedUpstream('guarded');
      const session = await agentOn(h(), cred.token as string);
      try {
        const listener = await session
          .httpEndpoint()
          .basicAuth('alice', 'correct horse')
          .requestHeader('add', 'x-added: by-the-edge')
          .listenAndForward(`http://127.0.0.1:${up.port}`);
        const host = new URL(listener.url()!).hostname;
        // Its modules come in the same row as the tunnel: read with it.
        await b.agents!.routed(listener.url()!);
        const refused = await request(through(h(), b), host, '/');
        assert.equal(refused.status, 401);
        const basic = `Basic ${Buffer.from('alice:correct horse').toString('base64')}`;
        const allowed = await request(through(h(), b), host, '/in', { headers: { authorization: basic } });
        assert.equal(allowed.status, 200);
        assert.equal(allowed.text, 'guarded /in 0');
      } finally {
        await session.close();
        await up.close();
      }
    });

    test("an edge's tunnel group on instance C reaches a labeled tunnel on A", async () => {
      const api = await h().newAccount();
      const cred = await created(api, '/credentials', { description: 'instances' });
      const up = await namedUpstream('labeled');
      const session = await agentOn(h(), cred.token as string);
      try {
        const label = randomBytes(4).toString('hex');
        await session.labeledListener().label('app', label).listenAndForward(`http://127.0.0.1:${up.port}`);
        const group = await created(api, '/backends/tunnel_group', { labels: { app: label } });
        const { host } = await edgeWithRoute(api, { backend: { backend_id: group.id } });
        const there = through(h(), c);
        await edgesRead(there, () => c.agents!.edges.httpsEdge(host)?.routes.length === 1, 'the edge on C');
        await c.agents!.labeled(api.info.accountId, { app: label });
        const answer = await request(there, host, '/group');
        assert.equal(answer.status, 200);
        assert.equal(answer.text, 'labeled /group 0');
        // No other account's edge finds it: the labels are the account's own.
        const stranger = await h().newAccount();
        assert.equal(c.agents!.remoteTunnels!.labeled(stranger.info.accountId, { app: label }), undefined);
      } finally {
        await session.close();
        await up.close();
      }
    });

    test("a TCP endpoint on A is listened for on B's address at the same port, until it goes", async () => {
      const api = await h().newAccount();
      const cred = await created(api, '/credentials', { description: 'instances' });
      const echo = net.createServer((socket) => socket.pipe(socket));
      echo.listen(0, '127.0.0.1');
      await once(echo, 'listening');
      const session = await agentOn(h(), cred.token as string);
      try {
        const listener = await session.tcpEndpoint().listenAndForward(`tcp://127.0.0.1:${(echo.address() as AddressInfo).port}`);
        const url = listener.url()!;
        const port = Number(new URL(url).port);
        await b.agents!.routed(url);
        const socket = await connected('127.0.0.2', port);
        socket.write('ping over B');
        const [echoed] = (await once(socket, 'data')) as [Buffer];
        assert.equal(echoed.toString(), 'ping over B');
        socket.destroy();
        await listener.close();
        await b.agents!.routed(url, { gone: true });
        await assert.rejects(connected('127.0.0.2', port), /ECONNREFUSED/, "B stops listening once A's tunnel is gone");
      } finally {
        await session.close();
        echo.close();
      }
    });

    test('the peer listener takes no link without the master key', async () => {
      const peerPort = await peerAddressOf(h(), b);
      // A TLS client with another key fails the handshake.
      const wrong = tls.connect({
        host: '127.0.0.1',
        port: peerPort,
        minVersion: 'TLSv1.2',
        maxVersion: 'TLSv1.2',
        ciphers: 'ECDHE-PSK-CHACHA20-POLY1305',
        pskCallback: () => ({ psk: randomBytes(32), identity: 'edgeplane-peer' }),
        checkServerIdentity: () => undefined,
      });
      const [failed] = (await once(wrong, 'error')) as [Error];
      assert.match(failed.message, /alert|decrypt|handshake|bad record mac|socket hang up/i);
      // Plain bytes get nothing back before the connection ends.
      const plain = net.connect({ host: '127.0.0.1', port: peerPort });
      const received: Buffer[] = [];
      plain.on('data', (chunk: Buffer) => received.push(chunk));
      plain.on('error', () => {});
      plain.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      await once(plain, 'close');
      assert.ok(!Buffer.concat(received).toString().includes('HTTP/1.1'), 'no HTTP answer on the peer port');
    });
  },
  { agents: { heartbeatIntervalMs: 1000 }, peers: { pollMs: 200 } },
);

/** A TCP connection, once made. */
async function connected(host: string, port: number): Promise<net.Socket> {
  const socket = net.connect({ host, port });
  await once(socket, 'connect');
  return socket;
}

/** The port an instance listens for its peers on, as it wrote it in the store. */
async function peerAddressOf(h: Harness, other: Instance): Promise<number> {
  const row = await h.deps.store.db.selectFrom('peer_instances').select('peer_address').where('id', '=', other.agents!.instanceId).executeTakeFirst();
  if (!row) {
    // Written at its first sync; an instance with no agent writes it too.
    throw new Error('the instance has not written its peer address');
  }
  return Number(row.peer_address.slice(row.peer_address.lastIndexOf(':') + 1));
}
