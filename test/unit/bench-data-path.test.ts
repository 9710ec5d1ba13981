// The data-path benchmark's machinery against the real server (bench/data-path.ts relies on it
// for rows h, j and k): edgeplane in a child process answers accounts and its memory over IPC,
// the lightweight agents authenticate, bind a TCP endpoint and hold the streams of public
// connections, and the upstream streams a download and counts an upload of any size.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { forkUpstream, nextMessage, stopUpstream } from '../../bench/agents.js';
import { BenchApi } from '../../bench/api-client.js';
import { ChildRpc } from '../../bench/child-rpc.js';
import type { RawAgentCalls } from '../../bench/raw-agents.js';
import type { ServerCalls, ServerReady } from '../../bench/server-process.js';

/** Asks until `check` holds (the children count what they hold; there is no event to await across processes). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 15 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the data-path benchmark: edgeplane and the lightweight agents in child processes', () => {
  let server: { rpc: ChildRpc<ServerCalls>; ready: ServerReady };
  let agents: ChildRpc<RawAgentCalls>;

  before(async () => {
    server = await ChildRpc.start<ServerCalls, ServerReady>(new URL('../../bench/server-process.ts', import.meta.url), 'edgeplane', {
      args: ['sqlite'],
      execArgv: ['--expose-gc'],
    });
    agents = (await ChildRpc.start<RawAgentCalls, { pid: number }>(new URL('../../bench/raw-agents.ts', import.meta.url), 'agents')).rpc;
  });

  after(async () => {
    await agents?.stop();
    await server?.rpc.stop();
  });

  it('holds sessions and the streams of public connections, and the server counts them', async () => {
    const account = await server.rpc.call('account');
    const credential = await new BenchApi(server.ready.baseUrl, account.token).created('/credentials', { description: 'test' });
    const connected = await agents.call('connect', {
      count: 3,
      tokens: [credential.token as string],
      agentPort: server.ready.agentPort,
      caPem: server.ready.caPem,
      heartbeatMs: 10_000,
      concurrency: 3,
    });
    assert.equal(connected.sessions, 3);
    assert.equal((await server.rpc.call('stats', { gc: true })).sessions, 3);

    const { ports } = await agents.call('bindTcp', { sessions: 1 });
    assert.equal(ports.length, 1);
    const sockets = await Promise.all(
      [1, 2, 3, 4].map(async () => {
        const socket = net.connect({ host: '127.0.0.1', port: ports[0]! });
        await once(socket, 'connect');
        return socket;
      }),
    );
    await until('four streams held', async () => (await agents.call('streams')).open === 4);
    for (const socket of sockets) socket.destroy();
    await until('the streams closed with their connections', async () => (await agents.call('streams')).open === 0);
    assert.equal((await agents.call('streams')).total, 4);
    assert.equal((await agents.call('sessions')).open, 3);
  });

  it('reports memory and CPU time that move', async () => {
    const first = await server.rpc.call('stats', { gc: false });
    for (let i = 0; i < 20; i++) await server.rpc.call('account');
    const second = await server.rpc.call('stats', { gc: true });
    assert.ok(second.rss > 0 && second.heapUsed > 0);
    assert.ok(second.cpuUserUs + second.cpuSystemUs > first.cpuUserUs + first.cpuSystemUs, 'twenty accounts took no CPU time');
  });

  it('rejects a call the child does not have, and every call once the child is gone', async () => {
    await assert.rejects(server.rpc.call('nothing' as 'account'), /no call 'nothing'/);
    const spare = (await ChildRpc.start<RawAgentCalls, { pid: number }>(new URL('../../bench/raw-agents.ts', import.meta.url), 'spare agents')).rpc;
    spare.kill();
    await once(spare.child, 'exit');
    await assert.rejects(spare.call('streams'), /spare agents exited/);
  });
});

describe("the data-path benchmark's upstream", () => {
  let upstream: ChildProcess;
  let port: number;

  before(async () => {
    upstream = forkUpstream();
    port = (await nextMessage(upstream, 'ready', 'the upstream')).httpPort;
  });

  after(() => stopUpstream(upstream));

  it('streams a download of the size asked and counts an upload', async () => {
    const downloaded = await new Promise<number>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/download?bytes=3000001' }, (res) => {
          let bytes = 0;
          res.on('data', (c: Buffer) => (bytes += c.length));
          res.on('end', () => resolve(bytes));
        })
        .on('error', reject);
    });
    assert.equal(downloaded, 3_000_001);

    const counted = await new Promise<unknown>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/upload', headers: { 'Content-Length': 5 * 65_536 + 7 } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
      });
      req.on('error', reject);
      for (let i = 0; i < 5; i++) req.write(Buffer.alloc(65_536));
      req.end(Buffer.alloc(7));
    });
    assert.deepEqual(counted, { bytes: 5 * 65_536 + 7 });
  });
});
