// Agents that misbehave. One that stops reading: a hand-driven agent (edgeplane's own muxado client over TLS, so the
// test decides when it reads) authenticates, binds a TCP endpoint and then never reads again. A
// public client pushing 256 MB into the endpoint is stopped by flow control after a bounded amount
// (one stream window and the sockets' buffers), the server's memory does not follow, and the
// server's own heartbeat drops the silent agent, closing the public connection. One that floods
// requests: past its requests in flight, the next is answered at once.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import tls from 'node:tls';
import { ErrorCode } from '../../src/lib/muxado/frame.js';
import { Session, type MuxadoStream } from '../../src/lib/muxado/session.js';
import { acceptTyped, openTyped } from '../../src/lib/muxado/typed.js';
import { request } from '../edges/helpers.js';
import { describeEachStore, type Harness } from '../helpers/harness.js';

/** Writes one request on a new typed stream and reads the reply to its end (the server sends FIN). */
async function rpc(session: Session, type: number, json: string): Promise<Record<string, unknown>> {
  const stream: MuxadoStream = openTyped(session, type);
  stream.write(json);
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  await once(stream, 'end');
  return JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
}

const auth = (token: string) =>
  JSON.stringify({
    Version: ['3', '2'],
    ClientId: '',
    Extra: { OS: 'linux', Arch: 'x86_64', AuthToken: token, Version: '0.0.1', Metadata: '', Cookie: '', ClientType: 'stalled-test' },
  });

const TCP_BIND =
  '{"Id":"","Proto":"tcp","ForwardsTo":"nowhere:1","ForwardsProto":"","Opts":{"Addr":"","ProxyProto":0,"IPRestriction":null,"TrafficPolicy":null},' +
  '"Extra":{"Token":"","IPPolicyRef":"","Metadata":"","Bindings":[],"PoolingEnabled":false}}';

const HTTPS_BIND =
  '{"Id":"","Proto":"https","ForwardsTo":"nowhere:1","ForwardsProto":"","Opts":{"Hostname":"","Auth":"","Subdomain":"","HostHeaderRewrite":false,"ProxyProto":0},' +
  '"Extra":{"Token":"","IPPolicyRef":"","Metadata":"","Bindings":[],"PoolingEnabled":false}}';

/** A new account's credential, and an agent of edgeplane's own muxado client authenticated with it. */
async function handDrivenAgent(h: Harness, onStream: (type: number, stream: MuxadoStream) => void) {
  const api = await h.newAccount();
  const created = await api.post('/credentials', {});
  const socket = tls.connect({ host: '127.0.0.1', port: h.agents!.port, ca: h.agents!.caPem, servername: 'localhost' });
  await once(socket, 'secureConnect');
  socket.on('error', () => {});
  const session = new Session(socket, { role: 'client' });
  session.on('error', () => {});
  acceptTyped(session, { onStream });
  const authed = await rpc(session, 0, auth(created.json.token as string));
  return { api, socket, session, authed };
}

describeEachStore(
  'agents that misbehave',
  (h) => {
    test('bounds what a public client can push at it, and is dropped by the heartbeat', async (t) => {
      let proxied = 0;
      // The server's heartbeat is echoed until the agent stalls; a proxy stream is counted.
      const { api, socket, session, authed } = await handDrivenAgent(h(), () => proxied++);
      assert.match(String(authed.ClientId), /^ts_/, JSON.stringify(authed));
      const bound = await rpc(session, 1, TCP_BIND);
      assert.match(String(bound.URL), /^tcp:\/\/[^:]+:\d+$/, `the bind: ${JSON.stringify(bound)}`);
      const port = Number(new URL(String(bound.URL).replace(/^tcp:/, 'http:')).port);
      await h().agents!.routed(String(bound.URL));

      // From here the agent reads nothing more: its connection's bytes stay in the kernel.
      socket.pause();
      socket.removeAllListeners('data');

      const client = net.connect({ host: '127.0.0.1', port });
      await once(client, 'connect');
      client.on('error', () => {}); // reset when the agent is dropped
      const closed = new Promise((resolve) => client.once('close', resolve));
      const rssBefore = process.memoryUsage().rss;
      const chunk = Buffer.alloc(1024 * 1024, 7);
      let offered = 0;
      // Write until the socket refuses more and no drain comes for half a second: flow control holds.
      const limit = 256 * 1024 * 1024;
      while (offered < limit && !client.destroyed) {
        let more = true;
        while (more && offered < limit) {
          more = client.write(chunk);
          offered += chunk.length;
        }
        if (more) break;
        const drained = await Promise.race([once(client, 'drain').then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 500))]);
        if (!drained) break;
      }
      // What left this process toward the server (bytesWritten counts what is still queued here too).
      const accepted = client.bytesWritten - client.writableLength;
      const grown = process.memoryUsage().rss - rssBefore;
      t.diagnostic(`offered ${offered >> 20} MB, accepted ${(accepted / 1048576).toFixed(1)} MB, rss +${(grown / 1048576).toFixed(0)} MB`);
      assert.ok(accepted < 32 * 1024 * 1024, `the server took ${(accepted / 1024 / 1024).toFixed(1)} MB from the client before pushing back`);
      assert.ok(offered > accepted, 'the client was stopped before it had written everything');
      assert.ok(grown < 128 * 1024 * 1024, `memory grew by ${(grown / 1024 / 1024).toFixed(0)} MB`);
      assert.equal(proxied, 0, 'the stalled agent never even read the proxy stream');

      // The agent echoes no heartbeat now: the server drops it (3 × 1 s here) and the public connection with it.
      await closed;
      await new Promise<void>((resolve) => {
        const check = () => (h().agents!.registry.count(api.info.accountId) === 0 ? resolve() : setTimeout(check, 50));
        check();
      });
      assert.ok(h().logs.some((l) => l.msg === 'agent session ended' && l.account_id === api.info.accountId));
      socket.destroy();
    });

    test("an agent that resets a request's stream, or answers it with garbage, gets its client a 502; the server serves on", async () => {
      let mode: 'reset' | 'garbage' = 'reset';
      const { socket, session } = await handDrivenAgent(h(), (_type, stream) => {
        if (mode === 'reset') stream.reset(ErrorCode.streamReset);
        else stream.end('this is no HTTP\r\n\r\n');
      });
      const bound = await rpc(session, 1, HTTPS_BIND);
      const url = String(bound.URL);
      assert.match(url, /^https:\/\//, JSON.stringify(bound));
      await h().agents!.routed(url);
      for (const next of ['reset', 'garbage', 'reset'] as const) {
        mode = next;
        const answer = await request(h(), new URL(url).hostname, '/');
        assert.equal(answer.status, 502, `${next}: ${answer.text}`);
        assert.match(String(answer.headers['ngrok-error-code']), /^ERR_NGROK_/, next);
      }
      session.goAway();
      socket.destroy();
    });

    test('a session with its requests in flight has the next answered at once, and the others served', async () => {
      const { socket, session } = await handDrivenAgent(h(), () => {});
      // Four binds begun and left unfinished (half their JSON): all the session may have in flight.
      const pending = Array.from({ length: 4 }, () => {
        const stream = openTyped(session, 1);
        stream.write(TCP_BIND.slice(0, 40));
        return stream;
      });
      const refused = await rpc(session, 1, TCP_BIND);
      assert.match(String(refused.Error), /Too many requests at once[^]*ERR_EP_AGENT_616/);
      // Finished, they are served.
      const answers = pending.map(async (stream) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.write(TCP_BIND.slice(40));
        await once(stream, 'end');
        return JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
      });
      for (const answer of await Promise.all(answers)) assert.match(String(answer.URL), /^tcp:\/\//, JSON.stringify(answer));
      session.goAway();
      socket.destroy();
    });
  },
  { agents: { heartbeatIntervalMs: 1_000, heartbeatMisses: 3, maxRequestsInFlight: 4 }, acrossInstances: true },
);
