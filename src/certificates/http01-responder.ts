// The built-in HTTP-01 challenge responder (EDGEPLANE_HTTP01_LISTEN): answers the CA's
// `GET /.well-known/acme-challenge/<token>` with the key authorization a certificate job
// published in the store, so any instance can answer for a job run on another. The operator's
// edge forwards that path of every managed domain here (docs/certificates.md). It serves nothing
// else; node:http is enough for one route, and keeps it apart from the API's server and limits.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { challengeValues } from '../db/acme.js';
import type { Store } from '../db/store.js';

const CHALLENGE_PATH = /^\/\.well-known\/acme-challenge\/([A-Za-z0-9_-]{1,256})$/;

export interface RunningResponder {
  host: string;
  port: number;
  close(): Promise<void>;
}

export async function startHttp01Responder(options: { store: Store; host: string; port: number; log: Logger }): Promise<RunningResponder> {
  const { store, log } = options;
  const server = http.createServer({ headersTimeout: 5_000, requestTimeout: 10_000 }, (request, response) => {
    const reply = (status: number, body: string) => {
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    const token = CHALLENGE_PATH.exec(new URL(request.url ?? '/', 'http://responder').pathname)?.[1];
    if (request.method !== 'GET' && request.method !== 'HEAD') return reply(405, 'method not allowed\n');
    if (!token) return reply(404, 'not found\n');
    challengeValues(store, 'http-01', token, new Date()).then(
      ([value]) => (value === undefined ? reply(404, 'no such challenge\n') : reply(200, value)),
      (error: unknown) => {
        log.error({ err: error }, 'HTTP-01 responder: the store could not be read');
        reply(503, 'unavailable, try again\n');
      },
    );
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    host: address.address,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
