// Two relays written with Node alone, in a child process of the benchmark, as what any relay on
// Node's one thread can reach on this machine beside edgeplane's endpoint in rows g, h and i:
//
// - the bare relay: TLS off the client's bytes, and those bytes, unread, over a TLS connection
//   to the upstream's process, which takes TLS off them and pipes them to the plain HTTP port
//   (bench/upstream.ts, `hopPort`). The two TLS hops of edgeplane's path (client to edgeplane,
//   edgeplane to the agent) and nothing else: no HTTP parsed, no framing, no access line, no
//   metric, one connection to the far end per client connection.
// - the Node HTTP proxy: node:https in, node:http out through a keep-alive agent, the response
//   piped back. What a relay built on Node's HTTP modules pays with one TLS hop, before any work
//   of its own.
//
// Neither is a product: they bound what edgeplane's path could cost in this runtime.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { selfSigned } from '../test/helpers/certs.js';

export type ToRelays = { kind: 'start'; hopPort: number; httpPort: number };
export type FromRelays = { kind: 'relays'; pipePort: number; proxyPort: number };

function listen(server: tls.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

async function start({ hopPort, httpPort }: ToRelays): Promise<FromRelays> {
  const cert = await selfSigned({ names: ['localhost'], ips: ['127.0.0.1'], keyKind: 'ecdsa' });
  const pipe = tls.createServer({ cert: cert.certPem, key: cert.keyPem }, (client) => {
    client.setNoDelay(true);
    const far = tls.connect({ host: '127.0.0.1', port: hopPort, rejectUnauthorized: false });
    far.setNoDelay(true);
    client.pipe(far).pipe(client);
    client.on('error', () => far.destroy());
    far.on('error', () => client.destroy());
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const proxy = https.createServer({ cert: cert.certPem, key: cert.keyPem, keepAliveTimeout: 60_000 }, (req, res) => {
    const out = http.request({ host: '127.0.0.1', port: httpPort, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  return { kind: 'relays', pipePort: await listen(pipe), proxyPort: await listen(proxy) };
}

if (!process.send) throw new Error('bench/node-relays.ts runs as a forked child of the benchmark');
process.on('message', (message: ToRelays) => {
  if (message.kind !== 'start') return;
  start(message).then(
    (ready) => process.send!(ready),
    (error: unknown) => {
      console.error('bench relays failed:', error);
      process.exit(1);
    },
  );
});
process.on('disconnect', () => process.exit(0));
