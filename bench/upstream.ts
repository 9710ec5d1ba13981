// The upstream of the data-path rows and of the edge rows, and the agent, in a child process of
// the benchmark (forked with IPC), so that neither shares an event loop, a garbage collector or a
// process with edgeplane: a bare node:http server on loopback (GET /small, GET /download?bytes=N
// and POST /upload for the transfers of row h, both streamed, and GET /headers, which answers the
// request's headers as JSON for the edge rows' checks), the same handler behind node:https with a
// self-signed ECDSA P-256 certificate (the key kind of edgeplane's own certificates), and, when
// asked, an agent of ngrok's SDK (@ngrok/ngrok) that binds an HTTPS endpoint forwarding to the
// plain HTTP server. The parent talks to it with the messages below; it exits when the parent
// goes away.
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import ngrok from '@ngrok/ngrok';
import { selfSigned } from '../test/helpers/certs.js';
import { SMALL_BYTES, type FromUpstream, type ToUpstream } from './upstream-messages.js';

const bodies: Record<string, Buffer> = {
  '/small': Buffer.alloc(SMALL_BYTES, 'x'),
};

/** What GET /download sends, again and again: a body of any size is never held whole. */
const CHUNK = Buffer.alloc(64 * 1024, 'z');

/** Writes `total` bytes of CHUNK, waiting for 'drain' whenever the socket's buffer is full. */
function download(res: http.ServerResponse, total: number): void {
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': total });
  let left = total;
  const write = (): void => {
    while (left > 0) {
      const n = Math.min(CHUNK.length, left);
      left -= n;
      if (!res.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) return void res.once('drain', write);
    }
    res.end();
  };
  write();
}

/** Reads the request's body to its end, counting it, and answers the count as JSON. */
function upload(req: http.IncomingMessage, res: http.ServerResponse): void {
  let bytes = 0;
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    const body = Buffer.from(JSON.stringify({ bytes }));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    res.end(body);
  });
}

function handler(req: http.IncomingMessage, res: http.ServerResponse): void {
  if (req.method === 'POST' && req.url === '/upload') return upload(req, res);
  req.resume();
  const asked = req.method === 'GET' && req.url?.startsWith('/download?') ? Number(new URLSearchParams(req.url.slice('/download?'.length)).get('bytes')) : NaN;
  if (Number.isSafeInteger(asked) && asked >= 0) return download(res, asked);
  if (req.method === 'GET' && req.url === '/headers') {
    // What reached the upstream (the edge rows check their request modules with it; never loaded).
    const seen = Buffer.from(JSON.stringify(req.headers));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': seen.length });
    res.end(seen);
    return;
  }
  const body = req.method === 'GET' ? bodies[req.url ?? ''] : undefined;
  if (!body) {
    res.writeHead(404, { 'Content-Type': 'text/plain', 'Content-Length': 9 });
    res.end('not found');
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length });
  res.end(body);
}

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

const send = (message: FromUpstream) => process.send!(message);

async function main(): Promise<void> {
  if (!process.send) throw new Error('bench/upstream.ts runs as a forked child of the benchmark');
  const cert = await selfSigned({ names: ['localhost'], ips: ['127.0.0.1'], keyKind: 'ecdsa' });
  const plain = http.createServer({ keepAliveTimeout: 60_000 }, handler);
  const secure = https.createServer({ cert: cert.certPem, key: cert.keyPem, keepAliveTimeout: 60_000 }, handler);
  const httpPort = await listen(plain);
  const httpsPort = await listen(secure);
  // The bare relay's far end: TLS off, then the bytes as they are to the plain HTTP port.
  const hop = tls.createServer({ cert: cert.certPem, key: cert.keyPem }, (client) => {
    const upstream = net.connect(httpPort, '127.0.0.1');
    upstream.setNoDelay(true);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  const hopPort = await listen(hop);
  let session: ngrok.Session | undefined;

  process.on('message', (message: ToUpstream) => {
    if (message.kind !== 'agent' || session) return;
    void (async () => {
      try {
        session = await new ngrok.SessionBuilder().authtoken(message.token).serverAddr(message.serverAddr).caCert(Buffer.from(message.caPem)).connect();
        const listener = await session.httpEndpoint().listenAndForward(`http://127.0.0.1:${httpPort}`);
        const url = listener.url();
        if (!url) throw new Error('the endpoint has no URL');
        send({ kind: 'bound', url });
      } catch (error) {
        send({ kind: 'failed', error: error instanceof Error ? error.message : String(error) });
      }
    })();
  });
  process.on('disconnect', () => {
    void session?.close().catch(() => {});
    plain.closeAllConnections();
    secure.closeAllConnections();
    plain.close();
    secure.close();
    hop.close();
    // The SDK's runtime may keep the process alive; the parent is gone, so nothing is lost.
    setTimeout(() => process.exit(0), 1_000).unref();
  });
  send({ kind: 'ready', httpPort, httpsPort, hopPort });
}

main().catch((error: unknown) => {
  console.error('bench upstream failed:', error);
  process.exit(1);
});
