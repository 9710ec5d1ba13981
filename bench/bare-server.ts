// Baseline for the benchmark: a plain node:http server that answers every request with one fixed JSON body.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BareServer {
  readonly url: string;
  /** Answers from now on with a JSON body of exactly `bytes` bytes. */
  setBodySize(bytes: number): void;
  close(): Promise<void>;
}

/** A JSON document of exactly `bytes` bytes (at least the 10 bytes of `{"pad":""}`). */
export function jsonBodyOfSize(bytes: number): Buffer {
  const frame = '{"pad":""}';
  const body = `{"pad":"${'x'.repeat(Math.max(0, bytes - frame.length))}"}`;
  return Buffer.from(body, 'utf8');
}

export async function startBareServer(): Promise<BareServer> {
  let body = jsonBodyOfSize(0);
  const server = http.createServer((req, res) => {
    // Read the request body (the POST scenario sends one) before answering, as Fastify does.
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
      res.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setBodySize(bytes) {
      body = jsonBodyOfSize(bytes);
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
