// Two `edgeplane serve` processes on one store, with peer links, behind a TCP balancer for the
// agents: a public request reaching B is served by the agent on A; A is killed with SIGKILL; the
// agent, redialing through the balancer, lands on B, resumes its session there (its cookie is any
// instance's to check), binds its endpoint again under the same URL, and the endpoint answers
// again — while the dead instance's rows leave the API with their lease.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import ngrok from '@ngrok/ngrok';
import { describeEachStore } from '../helpers/harness.js';
import { spawnServe, type ServeProcess } from '../helpers/serve-process.js';

/** A TCP balancer: each connection goes to the first backend that accepts it, in order. */
async function balancer(backends: () => number[]): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('error', () => {});
    client.pause();
    const tryNext = (left: number[]) => {
      const port = left[0];
      if (port === undefined) return client.destroy();
      const upstream = net.connect({ host: '127.0.0.1', port });
      upstream.once('error', () => tryNext(left.slice(1)));
      upstream.once('connect', () => {
        sockets.add(upstream);
        upstream.on('error', () => client.destroy());
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      });
    };
    tryNext(backends());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** The port a line of `serve`'s output names (`<prefix> 127.0.0.1:PORT`), once it has printed it. */
async function portIn(serve: ServeProcess, prefix: string): Promise<number> {
  const pattern = new RegExp(`${prefix} 127\\.0\\.0\\.1:(\\d+)`);
  const until = Date.now() + 10_000;
  for (;;) {
    const m = pattern.exec(serve.output());
    if (m) return Number(m[1]);
    if (Date.now() > until || serve.exited()) throw new Error(`no '${prefix}' line in:\n${serve.output()}`);
    await once(serve.child.stdout!, 'data');
  }
}

/** A GET to an instance's public HTTPS listener for `host`; the status, or 0 when the connection failed. */
function publicGet(at: { host: string; port: number }, host: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve) => {
    const req = https.get(
      { host: at.host, port: at.port, servername: host, headers: { host }, path: '/', rejectUnauthorized: false, agent: false, timeout: 5000 },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve({ status: 0, text: '' }));
  });
}

/**
 * Asks until the answer is a 200 or `withinMs` has passed, 50 ms between asks: another process's
 * state (what B has read of A, the agent's redial) gives this one no event to wait for.
 */
async function answered(ask: () => Promise<{ status: number; text: string }>, withinMs: number): Promise<{ status: number; text: string }> {
  const until = Date.now() + withinMs;
  let answer = await ask();
  while (answer.status !== 200 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    answer = await ask();
  }
  return answer;
}

describeEachStore('an instance killed under its agents', (h) => {
  const processes: ServeProcess[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-failover-'));
  after(async () => {
    for (const p of processes) await p.stop(2000);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('under load: its agent reconnects to the other instance under the same URL; no acknowledged write and no request to B is lost', async (t) => {
    const env = {
      ...process.env,
      EDGEPLANE_DATABASE_URL: h().databaseUrl,
      // One data directory: both serve the local CA's certificate to agents, as one balancer name would.
      EDGEPLANE_DATA_DIR: dataDir,
      EDGEPLANE_MASTER_KEY: randomBytes(32).toString('base64'),
      EDGEPLANE_TLS: 'off',
      EDGEPLANE_LISTEN: '127.0.0.1:0',
      EDGEPLANE_AGENT_LISTEN: '127.0.0.1:0',
      EDGEPLANE_INGRESS_HTTPS_LISTEN: '127.0.0.1:0',
      EDGEPLANE_INGRESS_HTTP_LISTEN: 'off',
      // Both behind one public port, as behind a balancer: URLs name it, whichever instance binds.
      EDGEPLANE_PUBLIC_HTTPS_PORT: '443',
      EDGEPLANE_PEER_LISTEN: '127.0.0.1:0',
      EDGEPLANE_BOOTSTRAP: 'off',
      EDGEPLANE_LOG_LEVEL: 'warn',
    };
    const a = await spawnServe(env);
    processes.push(a);
    const b = await spawnServe(env);
    processes.push(b);
    const agentPorts = [await portIn(a, 'agents dial in at'), await portIn(b, 'agents dial in at')];
    const httpsB = { host: '127.0.0.1', port: await portIn(b, 'public HTTPS and TLS endpoints on') };
    const lb = await balancer(() => agentPorts.filter((_, i) => !(i === 0 && a.exited())));

    const api = await h().newAccount();
    const cred = await api.post('/credentials', { description: 'failover' });
    assert.equal(cred.status, 201, cred.text);
    const upstream = http.createServer((req, res) => res.end(`served ${req.url}`));
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const session = await new ngrok.SessionBuilder()
      .authtoken(cred.json.token as string)
      .serverAddr(`127.0.0.1:${lb.port}`)
      .caCert(fs.readFileSync(path.join(dataDir, 'tls', 'ca.crt')))
      .connect();
    // A second agent, connected to B itself: its traffic never reaches A.
    const onB = await new ngrok.SessionBuilder()
      .authtoken(cred.json.token as string)
      .serverAddr(`127.0.0.1:${agentPorts[1]}`)
      .caCert(fs.readFileSync(path.join(dataDir, 'tls', 'ca.crt')))
      .connect();
    try {
      const listenerB = await onB.httpEndpoint().listenAndForward(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
      const hostB = new URL(listenerB.url()!).hostname;
      const listener = await session.httpEndpoint().listenAndForward(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
      const host = new URL(listener.url()!).hostname;
      assert.equal(listener.url(), `https://${host}`, 'the URL names the public port (443: none)');
      // Through B, whose peer link carries it to the agent on A (once B has read A's tunnel).
      const before = await answered(() => publicGet(httpsB, host), 5000);
      assert.equal(before.status, 200, 'B serves the agent connected to A');
      assert.equal(before.text, 'served /');

      // Load until a second after the kill: API writes to both instances, public requests to B's own agent.
      let loading = true;
      const acknowledged: string[] = [];
      const writes = (async () => {
        for (let i = 0; loading; i++) {
          const at = api.at(i % 2 === 0 ? a.base : b.base);
          const made = await at.post('/api_keys', { description: `load ${i}` }).catch(() => undefined);
          if (made?.status === 201) acknowledged.push(made.json.id as string);
        }
      })();
      const publicAnswers: number[] = [];
      const reads = (async () => {
        while (loading) publicAnswers.push((await publicGet(httpsB, hostB)).status);
      })();
      while (acknowledged.length < 10) await new Promise((resolve) => setTimeout(resolve, 20));

      const killedAt = Date.now();
      a.child.kill('SIGKILL');
      await once(a.child, 'exit');
      setTimeout(() => (loading = false), 1000);
      // The agent redials (its own backoff) through the balancer to B and binds again there.
      const answer = await answered(() => publicGet(httpsB, host), 30_000);
      const tookMs = Date.now() - killedAt;
      assert.equal(answer.status, 200, `the endpoint answers again (${tookMs} ms after the kill)\n${b.output().slice(-3000)}`);
      assert.equal(answer.text, 'served /');
      t.diagnostic(`the endpoint answered again ${tookMs} ms after the kill`);
      await Promise.all([writes, reads]);
      // Every write that was answered 201, on either instance, is in the store.
      const listed = new Set<string>();
      for (let next: string | undefined = '/api_keys?limit=100'; next;) {
        const page = await api.at(b.base).get(next);
        assert.equal(page.status, 200);
        for (const key of page.json.keys as { id: string }[]) listed.add(key.id);
        next = (page.json.next_page_uri as string | null) ?? undefined;
      }
      const lost = acknowledged.filter((id) => !listed.has(id));
      assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged writes are missing`);
      // Every public request to B's own agent was answered, before, during and after the kill.
      assert.ok(publicAnswers.length > 10, `${publicAnswers.length} public requests`);
      assert.deepEqual(
        publicAnswers.filter((status) => status !== 200),
        [],
      );
      t.diagnostic(`${acknowledged.length} writes acknowledged and kept, ${publicAnswers.length} requests to B answered`);
      assert.equal(new URL(listener.url()!).hostname, host, 'the same URL');
      // One session in the API, on B: the resumed one took over the dead instance's row.
      const sessions = await api.at(b.base).get('/tunnel_sessions');
      assert.equal(sessions.status, 200);
      assert.equal((sessions.json.tunnel_sessions as unknown[]).length, 2, "the resumed session and B's own");
    } finally {
      await onB.close().catch(() => {});
      // Its connection may be mid-redial: closing then fails, which says nothing of the test.
      await session.close().catch(() => {});
      upstream.close();
      lb.close();
    }
  });
});
