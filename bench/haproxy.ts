// Row m of the data-path benchmark: an HTTPS edge whose route goes to a static address backend,
// made through the API, against Debian's HAProxy doing the same job: terminating TLS with the same
// certificate and key (an uploaded certificate of the edge's reserved domain; ECDSA P-256, the
// kind edgeplane issues) and proxying to the same upstream over kept-alive connections. The same
// load tool, connections and request, each loaded twice in alternating order.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { makeChain } from '../test/helpers/certs.js';
import { freePort } from '../test/helpers/ports.js';
import type { LoadedRowContext } from './verdict.js';
import { onPath, type LoadResult, type LoadTarget } from './load.js';
import { SMALL_BYTES } from './upstream-messages.js';

export interface StaticEdgeContext extends LoadedRowContext {
  /** The upstream's plain HTTP port. */
  upstreamPort: number;
}

/** How long the edge and HAProxy may take to answer their first request. */
const READY_MS = 15_000;

const formatInt = (value: number): string => Math.round(value).toLocaleString('en-US');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One GET /small to 127.0.0.1:port with the name as SNI and Host, the certificate checked against `ca`. */
function getSmall(port: number, host: string, ca: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, servername: host, ca, path: '/small', headers: { Host: host }, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
    });
    req.setTimeout(5_000, () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', reject);
    req.end();
  });
}

/** Asks until GET /small answers 200 and the upstream's body (the edge reads its configuration, HAProxy starts). */
async function answering(what: string, port: number, host: string, ca: string): Promise<void> {
  const deadline = performance.now() + READY_MS;
  let last = '';
  while (performance.now() < deadline) {
    try {
      const r = await getSmall(port, host, ca);
      if (r.status === 200 && r.bytes === SMALL_BYTES) return;
      last = `status ${r.status}, ${r.bytes} bytes`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await sleep(100);
  }
  throw new Error(`${what}: GET /small did not answer 200 with ${SMALL_BYTES} bytes within ${READY_MS / 1000} s (last: ${last})`);
}

/** The TLS version and cipher a client of Node's negotiates, to show both sides speak the same. */
async function negotiated(port: number, host: string, ca: string): Promise<string> {
  const socket = tls.connect({ host: '127.0.0.1', port, servername: host, ca });
  await once(socket, 'secureConnect');
  const cipher = socket.getCipher();
  const key = socket.getPeerX509Certificate()?.publicKey.asymmetricKeyType;
  socket.destroy();
  return `${cipher.version} ${cipher.name}, ${key} key`;
}

interface HaproxyRun {
  port: number;
  /** Rejects when HAProxy exits (it never should while the row runs), with what it wrote. */
  exited: Promise<never>;
  stop(): Promise<void>;
}

/** HAProxy in the foreground (-db) from a temporary directory: the certificate chain and key in one PEM, one frontend, one backend. */
async function startHaproxy(binary: string, pem: string, upstreamPort: number): Promise<HaproxyRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-bench-haproxy-'));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'site.pem'), pem, { mode: 0o600 });
  fs.writeFileSync(
    path.join(dir, 'haproxy.cfg'),
    [
      'global',
      '  maxconn 4000',
      'defaults',
      '  mode http',
      '  timeout connect 5s',
      '  timeout client 60s',
      '  timeout server 60s',
      '  timeout http-keep-alive 60s',
      'frontend bench',
      `  bind 127.0.0.1:${port} ssl crt ${path.join(dir, 'site.pem')}`,
      '  default_backend upstream',
      'backend upstream',
      // Idle connections to the upstream are reused (HAProxy's default is `safe`): as the edge's pool.
      `  server upstream 127.0.0.1:${upstreamPort}`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(binary, ['-db', '-f', path.join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const kill = () => child.kill('SIGKILL');
  // Never left behind, even when the benchmark exits at once (a second Ctrl-C).
  process.once('exit', kill);
  const stop = async () => {
    process.off('exit', kill);
    if (child.exitCode === null && child.signalCode === null) {
      const gone = once(child, 'exit');
      child.kill('SIGTERM');
      await Promise.race([gone, sleep(5_000).then(kill)]);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const exited = once(child, 'exit').then(() => {
    throw new Error(`haproxy exited: ${output.trim().split('\n').slice(-3).join(' | ')}`);
  });
  exited.catch(() => {});
  return { port, exited, stop };
}

const haproxyBinary = (): string | undefined => onPath('haproxy') ?? (fs.existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : undefined);

export async function staticEdgeRow(ctx: StaticEdgeContext): Promise<void> {
  const { tool, seconds, warmupSeconds, checkInterrupted, server, api, upstreamPort, verdicts } = ctx;
  const tag = '[data path m]';
  const host = `m${randomBytes(4).toString('hex')}.example.com`;
  // The same certificate and key for both: uploaded to edgeplane for the edge's reserved domain, given to HAProxy.
  const chain = await makeChain({ names: [host] });
  const certificate = await api.created('/tls_certificates', { certificate_pem: chain.chainPem, private_key_pem: chain.leaf.keyPem });
  await api.created('/reserved_domains', { domain: host, certificate_id: certificate.id });
  const backend = await api.created('/backends/static', { address: `127.0.0.1:${upstreamPort}`, tls: { enabled: false } });
  const edge = await api.created('/edges/https', { hostports: [`${host}:443`] });
  await api.created(`/edges/https/${edge.id}/routes`, { match_type: 'path_prefix', match: '/', backend: { backend_id: backend.id } });
  const ca = chain.root.certPem;
  await answering('the edge', server.httpsPort, host, ca);
  console.log(`${tag} an HTTPS edge on ${host} (uploaded certificate), one route / to a static address backend http://127.0.0.1:${upstreamPort}`);
  console.log(`${tag} edgeplane negotiates ${await negotiated(server.httpsPort, host, ca)}`);

  const binary = haproxyBinary();
  let haproxy: HaproxyRun | undefined;
  let skipped: string | undefined;
  if (!binary) skipped = 'haproxy is not installed (Debian: haproxy; npm run bench installs it as root)';
  else {
    haproxy = await startHaproxy(binary, chain.leaf.certPem + chain.leaf.keyPem, upstreamPort);
    try {
      await Promise.race([answering('HAProxy', haproxy.port, host, ca), haproxy.exited]);
    } catch (error) {
      await haproxy.stop();
      throw error;
    }
    console.log(
      `${tag} HAProxy (${binary}, Debian's defaults: as many threads as cores, ${os.availableParallelism()} here) on 127.0.0.1:${haproxy.port} with the same certificate and key, to the same upstream; it negotiates ${await negotiated(haproxy.port, host, ca)}`,
    );
  }

  try {
    const target = (port: number): LoadTarget => ({ url: `https://127.0.0.1:${port}/small`, method: 'GET', headers: { Host: host }, servername: host });
    const sides = [{ label: 'edgeplane HTTPS edge', port: server.httpsPort }, ...(haproxy ? [{ label: 'HAProxy', port: haproxy.port }] : [])];
    console.log(
      `${tag} running m. GET /small with SNI and Host ${host}, keep-alive (${warmupSeconds} s warm-up each, then ${seconds} s each, twice, in alternating order)`,
    );
    for (const side of sides) {
      await tool.run(target(side.port), warmupSeconds);
      checkInterrupted();
    }
    const results = new Map<string, LoadResult[]>(sides.map((s) => [s.label, []]));
    for (const order of [sides, [...sides].reverse()]) {
      for (const side of order) {
        const r = await tool.run(target(side.port), seconds);
        checkInterrupted();
        const problems = r.non2xx + r.errors;
        console.log(
          `    ${side.label.padEnd(22)} ${formatInt(r.rate).padStart(7)} req/s  (p99 ${r.p99Ms === undefined ? 'n/a' : r.p99Ms.toFixed(1)} ms${problems > 0 ? `, ${formatInt(problems)} non-2xx or socket errors!` : ''})`,
        );
        if (problems > 0.01 * r.rate * seconds)
          throw new Error(`${side.label}: ${formatInt(problems)} of about ${formatInt(r.rate * seconds)} requests failed`);
        results.get(side.label)!.push(r);
      }
    }
    const mean = (label: string) => {
      const rs = results.get(label)!;
      return rs.reduce((sum, r) => sum + r.rate, 0) / rs.length;
    };
    const e = mean('edgeplane HTTPS edge');
    const h = haproxy ? mean('HAProxy') : undefined;
    if (h !== undefined) console.log(`    mean of the two runs: edgeplane ${formatInt(e)} req/s, HAProxy ${formatInt(h)} req/s, ratio ${(e / h).toFixed(2)}`);
    verdicts.push({
      row: 'm',
      what: 'HTTPS edge, static_address backend, requests/s',
      measured: `${formatInt(e)} req/s`,
      beside: h === undefined ? `HAProxy skipped: ${skipped}` : `HAProxy ${formatInt(h)} req/s (${(e / h).toFixed(2)}×)`,
      target: '≥ 0.50 × HAProxy',
      outcome: h === undefined ? 'n/a' : e >= 0.5 * h ? 'pass' : 'short',
    });
  } finally {
    await haproxy?.stop();
  }
}
