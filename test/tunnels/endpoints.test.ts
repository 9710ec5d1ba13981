// Endpoints bound by the real agent (@ngrok/ngrok) carry real traffic: public clients connect to
// the listeners edgeplane opens, each connection becomes a stream to the agent, and the agent
// forwards it to its upstream on loopback. Binds the account may not make are refused with the
// codes docs/agent-protocol.md lists.
import assert from 'node:assert/strict';
import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { test } from 'node:test';
import tls from 'node:tls';
import ngrok from '@ngrok/ngrok';
import { selfSigned } from '../helpers/certs.js';
import { describeEachStore, type Api, type Harness } from '../helpers/harness.js';
import { digestUpstream, roundTrip } from '../helpers/upstreams.js';

async function credential(api: Api, acl?: string[]): Promise<{ id: string; token: string }> {
  const created = await api.post('/credentials', { description: 'endpoint test', ...(acl && { acl }) });
  assert.equal(created.status, 201, created.text);
  return { id: created.json.id, token: created.json.token };
}

function connect(h: Harness, token: string): Promise<ngrok.Session> {
  return new ngrok.SessionBuilder().authtoken(token).serverAddr(`127.0.0.1:${h.agents!.port}`).caCert(Buffer.from(h.agents!.caPem)).connect();
}

/** A new account with a credential, an upstream and an agent connected with it; `done()` closes the agent and the upstream. */
async function setUp<U extends { close(): Promise<void> }>(h: Harness, upstream: () => Promise<U>) {
  const api = await h.newAccount();
  const cred = await credential(api);
  const up = await upstream();
  const session = await connect(h, cred.token);
  return {
    api,
    upstream: up,
    session,
    async done() {
      await session.close();
      await up.close();
    },
  };
}

/** The tunnels this process holds for an account. */
const tunnelsOf = (h: Harness, accountId: string) => h.agents!.registry.tunnels().filter((t) => t.accountId === accountId);

const portOf = (url: string) => Number(new URL(url.replace(/^tcp:/, 'http:')).port);

/**
 * An HTTP upstream on loopback: GET /bytes/N answers N random bytes with their SHA-256 in a
 * header; POST answers the size and SHA-256 of the body and the forwarding headers it saw; an
 * Upgrade to websocket is accepted by hand and echoes every byte after the handshake.
 */
async function httpUpstream(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const download = /^\/bytes\/(\d+)$/.exec(req.url ?? '');
    if (download) {
      const body = randomBytes(Number(download[1]));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'x-sha256': createHash('sha256').update(body).digest('hex') });
      res.end(body);
      return;
    }
    const hash = createHash('sha256');
    let size = 0;
    req.on('data', (c: Buffer) => {
      hash.update(c);
      size += c.length;
    });
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          size,
          sha256: hash.digest('hex'),
          host: req.headers.host,
          forwardedFor: req.headers['x-forwarded-for'],
          proto: req.headers['x-forwarded-proto'],
        }),
      );
    });
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const accept = createHash('sha1')
      .update(`${String(req.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    if (head.length > 0) socket.write(head);
    socket.pipe(socket);
    socket.on('error', () => {});
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

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A request to a public URL of the harness, through its HTTPS or HTTP listener on 127.0.0.1 (name by SNI and Host). */
function request(h: Harness, url: string, options: { method?: string; body?: Buffer; path?: string } = {}): Promise<Answer> {
  const target = new URL(url);
  const secure = target.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(
      {
        host: '127.0.0.1',
        port: secure ? h.agents!.httpsPort : h.agents!.httpPort,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: { host: target.host },
        ...(secure && { servername: target.hostname, ca: h.agents!.caPem }),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describeEachStore(
  'agent endpoints',
  (h) => {
    test('a TCP endpoint from the pool carries 3 MB each way through the agent to its upstream', async () => {
      const { api, upstream, session, done } = await setUp(h(), digestUpstream);
      try {
        const listener = await session.tcpEndpoint().metadata('db').listenAndForward(`tcp://127.0.0.1:${upstream.port}`);
        const url = listener.url()!;
        await h().agents!.routed(listener.url()!);
        assert.match(url, /^tcp:\/\/1\.tcp\.edgeplane\.app:\d+$/);
        const payload = randomBytes(3 * 1024 * 1024);
        const answer = await roundTrip(portOf(url), payload);
        assert.equal(answer, `${payload.length} ${createHash('sha256').update(payload).digest('hex')}\n`);

        const [held] = tunnelsOf(h(), api.info.accountId);
        assert.equal(held?.endpoint?.publicUrl, url);
        assert.equal(held?.metadata, 'db');
        assert.match(held!.id, /^tn_/);
        assert.equal(listener.id(), held!.id, "the agent's tunnel id is the one edgeplane lists");

        await listener.close();
        await h().agents!.routed(url, { gone: true });
        const refused = net.connect({ host: '127.0.0.1', port: portOf(url) });
        const [err] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
        assert.equal(err.code, 'ECONNREFUSED', 'an unbound endpoint stops listening');
        assert.equal(tunnelsOf(h(), api.info.accountId).length, 0);
      } finally {
        await done();
      }
    });

    test('many connections at once each reach the upstream on their own stream', async () => {
      const { upstream, session, done } = await setUp(h(), digestUpstream);
      try {
        const listener = await session.tcpEndpoint().listenAndForward(`tcp://127.0.0.1:${upstream.port}`);
        const port = portOf(listener.url()!);
        await h().agents!.routed(listener.url()!);
        const payloads = Array.from({ length: 20 }, (_, i) => randomBytes(1000 + i * 5000));
        const answers = await Promise.all(payloads.map((p) => roundTrip(port, p)));
        answers.forEach((a, i) => assert.equal(a, `${payloads[i]!.length} ${createHash('sha256').update(payloads[i]!).digest('hex')}\n`));
        assert.equal(upstream.connections(), 20);
      } finally {
        await done();
      }
    });

    test("a reserved address of the account is bound; another account's or an unreserved one is refused", async () => {
      const api = await h().newAccount();
      const other = await h().newAccount();
      const cred = await credential(api);
      const mine = await api.post('/reserved_addrs', { description: 'mine' });
      assert.equal(mine.status, 201, mine.text);
      const theirs = await other.post('/reserved_addrs', { description: 'theirs' });
      assert.equal(theirs.status, 201, theirs.text);
      const upstream = await digestUpstream();
      const session = await connect(h(), cred.token);
      try {
        const listener = await session.tcpEndpoint().remoteAddr(mine.json.addr).listenAndForward(`tcp://127.0.0.1:${upstream.port}`);
        assert.equal(listener.url(), `tcp://${mine.json.addr}`);
        await h().agents!.routed(listener.url()!);
        const [held] = tunnelsOf(h(), api.info.accountId);
        assert.equal(held?.endpoint?.tcpAddrId, mine.json.id);
        assert.equal(await roundTrip(portOf(listener.url()!), Buffer.from('hi')), `2 ${createHash('sha256').update('hi').digest('hex')}\n`);

        await assert.rejects(session.tcpEndpoint().remoteAddr(theirs.json.addr).listen(), (err: Error & { errorCode?: string }) => {
          assert.equal(err.errorCode, 'ERR_NGROK_309', err.message);
          return true;
        });
        await assert.rejects(session.tcpEndpoint().remoteAddr('1.tcp.edgeplane.app:1').listen(), (err: Error & { errorCode?: string }) => {
          assert.equal(err.errorCode, 'ERR_NGROK_307', err.message);
          return true;
        });
        await assert.rejects(session.tcpEndpoint().remoteAddr(mine.json.addr).listen(), (err: Error & { errorCode?: string }) => {
          assert.equal(err.errorCode, 'ERR_NGROK_334', err.message);
          return true;
        });
      } finally {
        await session.close();
        await upstream.close();
      }
    });

    test('an ACL of names only allows no TCP address; options edgeplane cannot serve are refused by name', async () => {
      const api = await h().newAccount();
      const limited = await credential(api, ['bind:app.example.com']);
      const open = await credential(api);
      const a = await connect(h(), limited.token);
      const b = await connect(h(), open.token);
      try {
        await assert.rejects(a.tcpEndpoint().listen(), (err: Error & { errorCode?: string }) => {
          // Only ERR_NGROK_ codes become the SDK's errorCode; edgeplane's own stay in the message.
          assert.match(err.message, /\nERR_EP_AGENT_610$/);
          return true;
        });
        await assert.rejects(b.tcpEndpoint().proxyProto('1').listen(), (err: Error & { errorCode?: string }) => {
          assert.match(err.message, /\nERR_EP_AGENT_611$/);
          assert.match(err.message, /proxy_proto/);
          return true;
        });
        assert.equal(tunnelsOf(h(), api.info.accountId).length, 0);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    test('a labeled tunnel is started, allowed by the label rules, and keeps its id when started again', async () => {
      const api = await h().newAccount();
      const cred = await credential(api, ['bind:env=prod']);
      const session = await connect(h(), cred.token);
      try {
        const first = await session.labeledListener().label('env', 'prod').metadata('m').listen(false);
        const [held] = tunnelsOf(h(), api.info.accountId);
        assert.deepEqual(held?.labels, { env: 'prod' });
        assert.equal(held?.endpoint, undefined);
        assert.equal(first.id(), held!.id);
        await first.close();
        const again = await session.labeledListener().label('env', 'prod').metadata('m').listen(false);
        assert.equal(again.id(), held!.id, 'the same labels in the same session: the same id');
        await assert.rejects(session.labeledListener().label('env', 'dev').listen(false), (err: Error & { errorCode?: string }) => {
          // Only ERR_NGROK_ codes become the SDK's errorCode; edgeplane's own stay in the message.
          assert.match(err.message, /\nERR_EP_AGENT_610$/);
          return true;
        });
        await again.close();
      } finally {
        await session.close();
      }
    });

    test('an HTTPS endpoint on a fresh name carries a 3 MB upload and download, with the forwarding headers', async () => {
      const { api, upstream, session, done } = await setUp(h(), httpUpstream);
      try {
        const listener = await session.httpEndpoint().listenAndForward(`http://127.0.0.1:${upstream.port}`);
        const url = listener.url()!;
        await h().agents!.routed(listener.url()!);
        assert.match(url, new RegExp(`^https://[a-z0-9]{16}\\.edgeplane\\.app:${h().agents!.httpsPort}$`));
        const upload = randomBytes(3 * 1024 * 1024);
        const posted = await request(h(), url, { method: 'POST', path: '/upload', body: upload });
        assert.equal(posted.status, 200, posted.body.toString());
        const seen = JSON.parse(posted.body.toString()) as { size: number; sha256: string; host: string; forwardedFor: string; proto: string };
        assert.deepEqual(seen, { size: upload.length, sha256: sha256(upload), host: new URL(url).host, forwardedFor: '127.0.0.1', proto: 'https' });
        const downloaded = await request(h(), url, { path: `/bytes/${3 * 1024 * 1024}` });
        assert.equal(downloaded.status, 200);
        assert.equal(downloaded.body.length, 3 * 1024 * 1024);
        assert.equal(sha256(downloaded.body), downloaded.headers['x-sha256']);
        const [held] = tunnelsOf(h(), api.info.accountId);
        assert.equal(held?.endpoint?.proto, 'https');
        assert.equal(held?.endpoint?.domainId, undefined, 'a fresh name is no reserved domain');
      } finally {
        await done();
      }
    });

    test('a WebSocket upgrade through an HTTPS endpoint echoes both ways', async () => {
      const { upstream, session, done } = await setUp(h(), httpUpstream);
      try {
        const listener = await session.httpEndpoint().listenAndForward(`http://127.0.0.1:${upstream.port}`);
        const host = new URL(listener.url()!).host;
        await h().agents!.routed(listener.url()!);
        const socket = tls.connect({ host: '127.0.0.1', port: h().agents!.httpsPort, servername: host.split(':')[0], ca: h().agents!.caPem });
        await once(socket, 'secureConnect');
        const key = randomBytes(16).toString('base64');
        socket.write(
          `GET /ws HTTP/1.1\r\nHost: ${host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
        let received = Buffer.alloc(0);
        socket.on('data', (c: Buffer) => (received = Buffer.concat([received, c])));
        const until = async (check: () => boolean) => {
          while (!check()) await once(socket, 'data');
        };
        await until(() => received.includes('\r\n\r\n'));
        const head = received.subarray(0, received.indexOf('\r\n\r\n')).toString();
        assert.match(head, /^HTTP\/1\.1 101 /);
        assert.match(
          head,
          new RegExp(
            `Sec-WebSocket-Accept: ${createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64').replace(/[+/]/g, '\\$&')}`,
            'i',
          ),
        );
        received = received.subarray(received.indexOf('\r\n\r\n') + 4);
        const frame = randomBytes(200_000);
        socket.write(frame);
        await until(() => received.length >= frame.length);
        assert.ok(received.equals(frame), 'every byte after the upgrade comes back');
        socket.destroy();
      } finally {
        await done();
      }
    });

    test('a reserved domain is bound by its account only; an unreserved one and an ACL outside it are refused', async () => {
      const api = await h().newAccount();
      const other = await h().newAccount();
      const name = `app-${randomBytes(4).toString('hex')}.edgeplane.app`;
      const reserved = await api.post('/reserved_domains', { domain: name });
      assert.equal(reserved.status, 201, reserved.text);
      const cred = await credential(api);
      const narrow = await credential(api, [`bind:other-${name}`]);
      const theirs = await credential(other);
      const upstream = await httpUpstream();
      const [mine, limited, foreign] = await Promise.all([connect(h(), cred.token), connect(h(), narrow.token), connect(h(), theirs.token)]);
      try {
        const listener = await mine.httpEndpoint().domain(name).listenAndForward(`http://127.0.0.1:${upstream.port}`);
        assert.equal(listener.url(), `https://${name}:${h().agents!.httpsPort}`);
        await h().agents!.routed(listener.url()!);
        const [held] = tunnelsOf(h(), api.info.accountId);
        assert.equal(held?.endpoint?.domainId, reserved.json.id);
        const answer = await request(h(), listener.url()!, { method: 'POST', body: Buffer.from('x') });
        assert.equal(JSON.parse(answer.body.toString()).sha256, sha256('x'));

        const codeOf = async (p: Promise<unknown>) => {
          try {
            await p;
          } catch (err) {
            const e = err as Error & { errorCode?: string };
            return e.errorCode ?? /\n(ERR_EP_AGENT_\d+)$/.exec(e.message)?.[1] ?? e.message;
          }
          return 'bound';
        };
        assert.equal(await codeOf(foreign.httpEndpoint().domain(name).listen(false)), 'ERR_NGROK_320');
        assert.equal(await codeOf(mine.httpEndpoint().domain(`unreserved-${name}`).listen(false)), 'ERR_EP_AGENT_612');
        assert.equal(await codeOf(limited.httpEndpoint().domain(name).listen(false)), 'ERR_EP_AGENT_610');
        assert.equal(await codeOf(limited.httpEndpoint().listen(false)), 'ERR_EP_AGENT_610', 'a fresh name is outside a narrow ACL too');
        assert.equal(await codeOf(mine.httpEndpoint().domain(name).listen(false)), 'ERR_NGROK_334');
        assert.equal(await codeOf(mine.httpEndpoint().domain(name).proxyProto('1').listen(false)), 'ERR_EP_AGENT_611');
      } finally {
        await Promise.all([mine.close(), limited.close(), foreign.close()]);
        await upstream.close();
      }
    });

    test('a plain HTTP endpoint carries 3 MB each way and is served on the HTTP listener only', async () => {
      const { upstream, session, done } = await setUp(h(), httpUpstream);
      try {
        const listener = await session.httpEndpoint().scheme('HTTP').listenAndForward(`http://127.0.0.1:${upstream.port}`);
        const url = listener.url()!;
        await h().agents!.routed(listener.url()!);
        assert.match(url, new RegExp(`^http://[a-z0-9]{16}\\.edgeplane\\.app:${h().agents!.httpPort}$`));
        const upload = randomBytes(3 * 1024 * 1024);
        const answer = await request(h(), url, { method: 'POST', body: upload });
        assert.deepEqual(JSON.parse(answer.body.toString()), {
          size: upload.length,
          sha256: sha256(upload),
          host: new URL(url).host,
          forwardedFor: '127.0.0.1',
          proto: 'http',
        });
        const downloaded = await request(h(), url, { path: `/bytes/${3 * 1024 * 1024}` });
        assert.equal(downloaded.body.length, 3 * 1024 * 1024);
        assert.equal(sha256(downloaded.body), downloaded.headers['x-sha256']);
        const overTls = await request(h(), url.replace(/^http:/, 'https:').replace(`:${h().agents!.httpPort}`, `:${h().agents!.httpsPort}`));
        assert.equal(overTls.status, 404);
        assert.equal(overTls.headers['ngrok-error-code'], 'ERR_NGROK_3200');
      } finally {
        await done();
      }
    });

    test('a TLS endpoint passes the client TLS through to the upstream, which presents its own certificate; 3 MB each way', async () => {
      const api = await h().newAccount();
      const name = `tls-${randomBytes(4).toString('hex')}.edgeplane.app`;
      assert.equal((await api.post('/reserved_domains', { domain: name })).status, 201);
      const cred = await credential(api);
      // The upstream's own certificate: the harness CA's server certificate would do, but one of its own proves the pass-through.
      const issued = await selfSigned({ names: [name] });
      const cert = issued.certPem;
      const key = issued.keyPem;
      // It reads a 4-byte length and that many bytes, then answers its name, their size and SHA-256,
      // and 3 MB of its own with their SHA-256 first (no half-close needed: TLS through the agent
      // is passed through as a whole connection).
      const download = randomBytes(3 * 1024 * 1024);
      const upstream = tls.createServer({ cert, key }, (socket) => {
        let received = Buffer.alloc(0);
        socket.on('data', (c: Buffer) => {
          received = Buffer.concat([received, c]);
          if (received.length < 4 || received.length < 4 + received.readUInt32BE(0)) return;
          const body = received.subarray(4, 4 + received.readUInt32BE(0));
          socket.write(`hello from ${socket.servername} ${body.length} ${sha256(body)} ${sha256(download)}\n`);
          socket.end(download);
        });
      });
      upstream.listen(0, '127.0.0.1');
      await once(upstream, 'listening');
      const session = await connect(h(), cred.token);
      try {
        const listener = await session
          .tlsEndpoint()
          .domain(name)
          .listenAndForward(`tcp://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
        assert.equal(listener.url(), `tls://${name}:${h().agents!.httpsPort}`);
        await h().agents!.routed(listener.url()!);
        const socket = tls.connect({ host: '127.0.0.1', port: h().agents!.httpsPort, servername: name, ca: cert });
        await once(socket, 'secureConnect');
        assert.equal(socket.getPeerX509Certificate()?.fingerprint256, new X509Certificate(cert).fingerprint256);
        const chunks: Buffer[] = [];
        socket.on('data', (c: Buffer) => chunks.push(c));
        const upload = randomBytes(3 * 1024 * 1024);
        const length = Buffer.alloc(4);
        length.writeUInt32BE(upload.length);
        socket.write(Buffer.concat([length, upload]));
        await once(socket, 'end');
        const all = Buffer.concat(chunks);
        const newline = all.indexOf('\n');
        const [hello, from, servedName, size, uploadHash, downloadHash] = all.subarray(0, newline).toString().split(' ');
        assert.deepEqual([hello, from, servedName, Number(size), uploadHash], ['hello', 'from', name, upload.length, sha256(upload)]);
        const received = all.subarray(newline + 1);
        assert.equal(received.length, 3 * 1024 * 1024);
        assert.equal(sha256(received), downloadHash);
      } finally {
        await session.close();
        upstream.close();
      }
    });

    test('a URL online on one instance is refused on another, unless both pool; it is free again once unbound', async () => {
      const api = await h().newAccount();
      const name = `both-${randomBytes(4).toString('hex')}.edgeplane.app`;
      assert.equal((await api.post('/reserved_domains', { domain: name })).status, 201);
      const cred = await credential(api);
      const second = await h().secondInstance({ agents: true });
      const onSecond = (): Promise<ngrok.Session> =>
        new ngrok.SessionBuilder().authtoken(cred.token).serverAddr(`127.0.0.1:${second.agents!.port}`).caCert(Buffer.from(second.agents!.caPem)).connect();
      const [a, b] = await Promise.all([connect(h(), cred.token), onSecond()]);
      try {
        const first = await a.httpEndpoint().domain(name).listen(false);
        await assert.rejects(b.httpEndpoint().domain(name).listen(false), (err: Error & { errorCode?: string }) => {
          assert.equal(err.errorCode, 'ERR_NGROK_334', err.message);
          return true;
        });
        await first.close();
        // Unbound on the first instance: the second may bind it now (the claim is released at once).
        let taken: ngrok.Listener | undefined;
        for (let i = 0; i < 50 && !taken; i++) {
          taken = await b
            .httpEndpoint()
            .domain(name)
            .listen(false)
            .catch(() => undefined);
          if (!taken) await new Promise((r) => setTimeout(r, 20));
        }
        assert.ok(taken, 'the second instance bound the URL once the first let it go');
        await taken.close();

        const pooledName = `pool-${name}`;
        assert.equal((await api.post('/reserved_domains', { domain: pooledName })).status, 201);
        const p1 = await a.httpEndpoint().domain(pooledName).poolingEnabled(true).listen(false);
        const p2 = await b.httpEndpoint().domain(pooledName).poolingEnabled(true).listen(false);
        assert.equal(p1.url()?.replace(/:\d+$/, ''), p2.url()?.replace(/:\d+$/, ''));
        await Promise.all([p1.close(), p2.close()]);
      } finally {
        await Promise.all([a.close(), b.close()]);
        await second.close();
      }
    });

    test('when the agent is gone its endpoint answers ERR_NGROK_3200 at once, and the agent takes it back when it reconnects', async () => {
      const api = await h().newAccount();
      const name = `back-${randomBytes(4).toString('hex')}.edgeplane.app`;
      assert.equal((await api.post('/reserved_domains', { domain: name })).status, 201);
      const cred = await credential(api);
      const upstream = await httpUpstream();
      let disconnects = 0;
      const session = await new ngrok.SessionBuilder()
        .authtoken(cred.token)
        .serverAddr(`127.0.0.1:${h().agents!.port}`)
        .caCert(Buffer.from(h().agents!.caPem))
        .handleDisconnection(() => {
          disconnects++;
          return disconnects <= 1; // reconnect once, then stop
        })
        .connect();
      try {
        const listener = await session.httpEndpoint().domain(name).listenAndForward(`http://127.0.0.1:${upstream.port}`);
        await h().agents!.routed(listener.url()!);
        const url = listener.url()!;
        assert.equal((await request(h(), url, { method: 'POST', body: Buffer.from('1') })).status, 200);
        const [first] = h().agents!.registry.list(api.info.accountId);
        assert.ok(h().agents!.registry.end(first!.id, 'ended by the test'));
        // Ended: the endpoint is offline at once (before the agent is back, or after; never a hang).
        const started = Date.now();
        const offline = await request(h(), url);
        assert.ok(Date.now() - started < 1_000);
        if (offline.status === 404) assert.equal(offline.headers['ngrok-error-code'], 'ERR_NGROK_3200');
        // Back: the same session id, the same tunnel id, the same URL, traffic again.
        const deadline = Date.now() + 15_000;
        let answer = offline;
        while (answer.status !== 200 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 100));
          answer = await request(h(), url, { method: 'POST', body: Buffer.from('2') });
        }
        assert.equal(answer.status, 200, 'the endpoint is back');
        const [again] = h().agents!.registry.list(api.info.accountId);
        assert.equal(again?.id, first!.id, 'the session was resumed');
        const [held] = tunnelsOf(h(), api.info.accountId);
        assert.equal(held?.id, listener.id(), 'the agent rebound the same tunnel id');
      } finally {
        disconnects = 99;
        await session.close();
        await upstream.close();
      }
    });
  },
  { agents: { heartbeatIntervalMs: 1_000 }, acrossInstances: true },
);
