// What the edge tests share: requests to the public HTTPS listener by name, local upstreams that
// record what they saw, the real agent behind tunnel group backends, and waiting for the edges to
// read a change made through the API.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import ngrok from '@ngrok/ngrok';
import type { Api, Harness, Response } from '../helpers/harness.js';
import { observed } from '../helpers/assertions.js';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

/** A request to the public HTTPS listener for `host` (SNI and Host), trusting the service CA. */
export function request(
  h: Harness,
  host: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; agent?: https.Agent } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: h.agents!.httpsPort,
        servername: host,
        ca: h.agents!.caPem,
        method: options.method ?? 'GET',
        path,
        headers: { host, ...options.headers },
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode!, headers: res.headers, body, text: body.toString() });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** What an upstream received, request by request. */
export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

/** A local HTTP upstream: answers `reply(req)` (default 200 with a text naming it) and records what it received. */
export async function upstream(
  name: string,
  reply?: (req: Received) => { status?: number; headers?: Record<string, string>; body?: string },
): Promise<{ port: number; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen = { method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString() };
      received.push(seen);
      const answer = reply?.(seen) ?? {};
      res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body ?? `${name} ${req.url}`);
    });
  });
  server.keepAliveTimeout = 500;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function created(api: Api, path: string, body: Record<string, unknown>): Promise<Response['json']> {
  const r = await api.post(path, body);
  assert.equal(r.status, 201, `${path}: ${r.text}`);
  return r.json;
}

export async function put(api: Api, path: string, body: Record<string, unknown>): Promise<Response['json']> {
  const r = await api.put(path, body);
  assert.equal(r.status, 200, `${path}: ${r.text}`);
  return r.json;
}

/** A fresh name under the harness's service domain (its certificate is the service CA's), reserved by the account. */
export async function reservedHost(api: Api): Promise<string> {
  const host = `e${randomBytes(4).toString('hex')}.edgeplane.app`;
  await created(api, '/reserved_domains', { domain: host });
  return host;
}

/** An HTTPS edge on a fresh reserved name with one route whose backend is `backendId`. */
export async function edgeWithRoute(api: Api, route: Record<string, unknown>): Promise<{ host: string; edgeId: string; routeId: string; routes: string }> {
  const host = await reservedHost(api);
  const edge = await created(api, '/edges/https', { hostports: [`${host}:443`] });
  const routes = `/edges/https/${edge.id}/routes`;
  const r = await created(api, routes, { match_type: 'path_prefix', match: '/', ...route });
  return { host, edgeId: edge.id, routeId: r.id, routes };
}

/** Resolves once `check` holds for what the edges of this instance read, looked at after each reading; fails after 5 s. */
export function edgesRead(h: Harness, check: () => boolean, what: string): Promise<void> {
  return observed((listener) => h.agents!.edges.observe(listener), check, `the edges reading ${what}`);
}

/** Resolves once the edge serving `host` has `routes` routes, as this instance reads it. */
export function routesRead(h: Harness, host: string, routes: number): Promise<void> {
  return edgesRead(h, () => h.agents!.edges.httpsEdge(host)?.routes.length === routes, `${routes} routes on ${host}`);
}

/** The real agent connected with a new credential of the account. */
export async function agent(h: Harness, api: Api): Promise<ngrok.Session> {
  const cred = await created(api, '/credentials', { description: 'edge test' });
  return new ngrok.SessionBuilder()
    .authtoken(cred.token as string)
    .serverAddr(`127.0.0.1:${h.agents!.port}`)
    .caCert(Buffer.from(h.agents!.caPem))
    .connect();
}

/** The agent's listener, once public traffic reaching the harness is carried to it (HarnessAgents.routed; an internal one's in `accountId`). */
export async function online<L extends { url(): string | null }>(h: Harness, listener: L, accountId?: string): Promise<L> {
  await h.agents!.routed(listener.url()!, accountId === undefined ? {} : { accountId });
  return listener;
}

/** Resolves once this instance listens on the TCP edge port. */
export async function portListening(h: Harness, port: number): Promise<void> {
  const ports = h.agents!.edgePorts;
  if (ports.isListening(port)) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`port ${port} was not listened on within 5 s`)), 5000);
    const onListening = (p: number) => {
      if (p !== port) return;
      clearTimeout(timer);
      ports.off('listening', onListening);
      resolve();
    };
    ports.on('listening', onListening);
  });
}
