// TCP and TLS edges serve connections: a TCP edge listens on its reserved addresses' ports while it
// has them; a TLS edge is reached by its server name and terminates TLS (its certificate, its
// lowest version, client certificates checked against its CAs) or passes it through; both apply
// their IP restriction and send the bytes to their backend — the real agent's labeled tunnel or a
// static address. HTTPS edges' own TLS settings are enforced at the handshake.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import tls from 'node:tls';
import { makeChain, selfSigned } from '../helpers/certs.js';
import { describeEachStore, type Harness } from '../helpers/harness.js';
import { agent, created, edgesRead, portListening, put, request, reservedHost } from './helpers.js';

/** A TCP upstream that answers each line with `<name>: <line>`; or, with `tlsOptions`, the same over TLS. */
async function echo(name: string, tlsOptions?: tls.TlsOptions): Promise<{ port: number; close(): Promise<void> }> {
  const handler = (socket: net.Socket) => {
    socket.on('error', () => {});
    socket.setEncoding('utf8');
    let buffered = '';
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let at;
      while ((at = buffered.indexOf('\n')) >= 0) {
        socket.write(`${name}: ${buffered.slice(0, at)}\n`);
        buffered = buffered.slice(at + 1);
      }
    });
  };
  const server = tlsOptions ? tls.createServer(tlsOptions, handler) : net.createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Sends a line on a connected socket and reads the answer line; rejects when the connection closes first. */
function ask(socket: net.Socket | tls.TLSSocket, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (chunk: Buffer) => {
      got += chunk.toString();
      if (got.includes('\n')) {
        socket.off('data', onData);
        resolve(got.trim());
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before an answer (got '${got}')`)));
    socket.write(`${line}\n`);
  });
}

function tlsConnect(h: Harness, servername: string, options: tls.ConnectionOptions = {}): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: h.agents!.httpsPort, servername, ca: h.agents!.caPem, ...options }, () => resolve(socket));
    socket.once('error', reject);
  });
}

async function tcpConnect(port: number): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

describeEachStore(
  'TCP and TLS edges serve connections',
  (h) => {
    test('a TCP edge listens on its reserved address while it has it, sends bytes to its static address, and refuses addresses its IP restriction does not allow', async () => {
      const api = await h().newAccount();
      const up = await echo('static');
      try {
        const addr = await created(api, '/reserved_addrs', {});
        const backend = await created(api, '/backends/static', { address: `127.0.0.1:${up.port}`, tls: { enabled: false } });
        const edge = await created(api, '/edges/tcp', { hostports: [addr.addr], backend: { backend_id: backend.id } });
        const port = Number(String(addr.addr).split(':')[1]);
        await portListening(h(), port);
        const socket = await tcpConnect(port);
        assert.equal(await ask(socket, 'hello'), 'static: hello');
        assert.equal(await ask(socket, 'again'), 'static: again');
        socket.destroy();

        const policy = await created(api, '/ip_policies', {});
        await created(api, '/ip_policy_rules', { ip_policy_id: policy.id, cidr: '192.0.2.0/24', action: 'allow' });
        await put(api, `/edges/tcp/${edge.id}/ip_restriction`, { ip_policy_ids: [policy.id] });
        await edgesRead(h(), () => Boolean(h().agents!.edges.tcpEdge(port)?.ipRestriction), 'the IP restriction');
        const refused = await tcpConnect(port);
        await assert.rejects(ask(refused, 'hello'), /closed before an answer/);
        assert.ok(h().logs.some((l) => l.msg === 'edge: connection refused' && l.edge_id === edge.id && l.why === 'ip_restriction'));

        // The edge loses the address: the port is closed.
        assert.equal((await api.patch(`/edges/tcp/${edge.id}`, { hostports: [] })).status, 200);
        await edgesRead(h(), () => !h().agents!.edgePorts.isListening(port), 'the port to close');
        const closed = net.connect(port, '127.0.0.1');
        const [err] = (await once(closed, 'error')) as [NodeJS.ErrnoException];
        assert.equal(err.code, 'ECONNREFUSED');
      } finally {
        await up.close();
      }
    });

    test('a TCP edge with a tunnel group backend reaches the real agent’s labeled tunnel', async () => {
      const api = await h().newAccount();
      const up = await echo('agent');
      const session = await agent(h(), api);
      try {
        await session.labeledListener().label('db', 'main').listenAndForward(`tcp://127.0.0.1:${up.port}`);
        await h().agents!.labeled(api.info.accountId, { db: 'main' });
        const addr = await created(api, '/reserved_addrs', {});
        const group = await created(api, '/backends/tunnel_group', { labels: { db: 'main' } });
        await created(api, '/edges/tcp', { hostports: [addr.addr], backend: { backend_id: group.id } });
        const port = Number(String(addr.addr).split(':')[1]);
        await portListening(h(), port);
        const socket = await tcpConnect(port);
        assert.equal(await ask(socket, 'select 1'), 'agent: select 1');
        socket.destroy();
      } finally {
        await session.close();
        await up.close();
      }
    });

    test('a TLS edge terminates TLS with its name’s certificate (the default), or passes it through to the upstream (terminate_at upstream)', async () => {
      const api = await h().newAccount();
      const host = await reservedHost(api);
      const upstreamCert = await selfSigned({ names: [host] });
      const plain = await echo('plain');
      const secured = await echo('secured', { cert: upstreamCert.certPem, key: upstreamCert.keyPem });
      try {
        const plainBackend = await created(api, '/backends/static', { address: `127.0.0.1:${plain.port}`, tls: { enabled: false } });
        const edge = await created(api, '/edges/tls', { hostports: [`${host}:443`], backend: { backend_id: plainBackend.id } });
        await edgesRead(h(), () => h().agents!.edges.tlsEdge(host) !== undefined, 'the TLS edge');
        const terminated = await tlsConnect(h(), host);
        assert.equal(await ask(terminated, 'hi'), 'plain: hi', 'the upstream gets the bytes in clear');
        terminated.destroy();

        const passBackend = await created(api, '/backends/static', { address: `127.0.0.1:${secured.port}`, tls: { enabled: false } });
        await put(api, `/edges/tls/${edge.id}/backend`, { backend_id: passBackend.id });
        await put(api, `/edges/tls/${edge.id}/tls_termination`, { terminate_at: 'upstream' });
        await edgesRead(h(), () => h().agents!.edges.tlsEdge(host)?.tlsTermination?.terminate_at === 'upstream', 'terminate_at upstream');
        const passed = await tlsConnect(h(), host, { ca: upstreamCert.certPem });
        assert.equal(passed.getPeerX509Certificate()?.fingerprint256, new (await import('node:crypto')).X509Certificate(upstreamCert.certPem).fingerprint256);
        assert.equal(await ask(passed, 'hi'), 'secured: hi');
        passed.destroy();
      } finally {
        await plain.close();
        await secured.close();
      }
    });

    test('mutual TLS: a TLS edge and an HTTPS edge take only clients whose certificate chains to their CAs', async () => {
      const api = await h().newAccount();
      const chain = await makeChain({ names: ['client.example.com'] });
      const stranger = await makeChain({ names: ['client.example.com'] });
      const up = await echo('mtls');
      try {
        const ca = await created(api, '/certificate_authorities', { ca_pem: chain.root.certPem });
        const backend = await created(api, '/backends/static', { address: `127.0.0.1:${up.port}`, tls: { enabled: false } });
        const host = await reservedHost(api);
        await created(api, '/edges/tls', {
          hostports: [`${host}:443`],
          backend: { backend_id: backend.id },
          mutual_tls: { certificate_authority_ids: [ca.id] },
        });
        await edgesRead(h(), () => h().agents!.edges.tlsEdge(host) !== undefined, 'the TLS edge');
        const mine = await tlsConnect(h(), host, { cert: chain.leaf.certPem, key: chain.leaf.keyPem });
        assert.equal(await ask(mine, 'in'), 'mtls: in');
        mine.destroy();
        for (const client of [{}, { cert: stranger.leaf.certPem, key: stranger.leaf.keyPem }]) {
          // TLS 1.3 sends the refusal after the client's handshake is done: the first read fails.
          const refused = await tlsConnect(h(), host, client).catch((err: Error) => err);
          if (refused instanceof Error) continue;
          await assert.rejects(ask(refused, 'in'));
        }

        const answer = await created(api, '/backends/http_response', { body: 'verified', status_code: 200, headers: {} });
        const webHost = await reservedHost(api);
        const web = await created(api, '/edges/https', { hostports: [`${webHost}:443`], mutual_tls: { certificate_authority_ids: [ca.id] } });
        await created(api, `/edges/https/${web.id}/routes`, { match_type: 'path_prefix', match: '/', backend: { backend_id: answer.id } });
        await edgesRead(h(), () => h().agents!.edges.httpsEdge(webHost)?.routes.length === 1, 'the HTTPS edge');
        await assert.rejects(request(h(), webHost, '/'));
        const https = await import('node:https');
        const withCert = new https.Agent({ cert: chain.leaf.certPem, key: chain.leaf.keyPem });
        assert.equal((await request(h(), webHost, '/', { agent: withCert })).text, 'verified');
        withCert.destroy();
      } finally {
        await up.close();
      }
    });

    test('an HTTPS edge’s min_version 1.3 refuses a TLS 1.2 client', async () => {
      const api = await h().newAccount();
      const answer = await created(api, '/backends/http_response', { body: 'modern', status_code: 200, headers: {} });
      const host = await reservedHost(api);
      const web = await created(api, '/edges/https', { hostports: [`${host}:443`], tls_termination: { min_version: '1.3' } });
      await created(api, `/edges/https/${web.id}/routes`, { match_type: 'path_prefix', match: '/', backend: { backend_id: answer.id } });
      await edgesRead(h(), () => h().agents!.edges.httpsEdge(host)?.routes.length === 1, 'the HTTPS edge');
      await assert.rejects(tlsConnect(h(), host, { maxVersion: 'TLSv1.2' }));
      const modern = await tlsConnect(h(), host);
      assert.equal(modern.getProtocol(), 'TLSv1.3');
      modern.destroy();
      assert.equal((await request(h(), host, '/')).text, 'modern');
    });
  },
  { agents: { heartbeatIntervalMs: 1000 }, acrossInstances: true },
);
