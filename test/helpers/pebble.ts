// A real Pebble (Let's Encrypt's ACME test server, Debian's package `pebble`) for the ACME tests:
// edgeplane's certificate issuance is only proven against a server that speaks ACME for real.
// Debian ships no config or certificates, so each instance gets a temporary directory with its
// own HTTPS certificate (signed by a throwaway CA the tests trust) and a config on free loopback
// ports. The process is killed on close and, as a safety net, when the test process exits.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { makeChain } from './certs.js';
import { freePort } from './ports.js';

export interface PebbleOptions {
  /** host:port of the DNS server Pebble resolves through (`-dnsserver`). */
  dnsServer: string;
  /** Port Pebble's validation authority connects to for HTTP-01 (config httpPort). */
  httpPort: number;
  /** Seconds a certificate is valid (config certificateValidityPeriod); Pebble's default when unset. */
  certificateValiditySeconds?: number;
  /** External account binding required, with these kid → base64url HMAC keys (config externalAccountBindingRequired / externalAccountMACKeys). */
  eab?: Record<string, string>;
  /** PEBBLE_WFE_NONCEREJECT percentage (default 0 here so tests are deterministic; real Pebble defaults to 5). */
  nonceRejectPercent?: number;
}

export interface Pebble {
  /** The ACME directory, https://127.0.0.1:PORT/dir. */
  directoryUrl: string;
  /** PEM file of the CA that signed Pebble's own HTTPS certificate (what edgeplane's EDGEPLANE_ACME_CA_FILE points at). */
  caFile: string;
  /** PEM of the root Pebble issues certificates under (its management interface's /roots/0), fetched over HTTPS trusting caFile. */
  issuanceRoots(): Promise<string[]>;
  /** Kills the process (SIGTERM, then SIGKILL after a grace period) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same ports; Pebble forgets all state and makes a new issuance root on every start. */
  start(): Promise<void>;
  /** stop() and removes the temporary directory. */
  close(): Promise<void>;
  /** Its stdout and stderr so far, for failure messages. */
  logs(): string;
}

/** The response to a GET: status code and body as text. */
export interface HttpsResponse {
  status: number;
  body: string;
}

const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;
const POLL_INTERVAL_MS = 100;
const REQUEST_TIMEOUT_MS = 2_000;

/** Where the pebble binary is: /usr/bin/pebble, else the first `pebble` on PATH; undefined when there is none. */
function pebbleBinary(): string | undefined {
  const dirs = ['/usr/bin', ...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean)];
  return dirs.map((dir) => path.join(dir, 'pebble')).find(isExecutable);
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Whether Pebble is installed (/usr/bin/pebble or pebble on PATH), so tests can skip without it. */
export function pebbleAvailable(): boolean {
  return pebbleBinary() !== undefined;
}

/**
 * GET `url` over HTTPS trusting only the CA certificate(s) in `ca` (PEM), on a fresh connection
 * each time so a stopped server is seen as refused rather than as a dead pooled socket.
 */
export function httpsGet(url: string, ca: string): Promise<HttpsResponse> {
  return new Promise((resolve, reject) => {
    const request = https.get(url, { ca, agent: false, timeout: REQUEST_TIMEOUT_MS }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`GET ${url} timed out`)));
    request.on('error', reject);
  });
}

interface Files {
  caFile: string;
  certificate: string;
  privateKey: string;
}

/** Pebble's HTTPS certificate for localhost and 127.0.0.1, its PKCS#8 key and the CA that signed it, written to `dir`. */
async function writeTlsFiles(dir: string): Promise<Files> {
  const chain = await makeChain({ names: ['localhost'], ips: ['127.0.0.1'] });
  const files = { caFile: path.join(dir, 'ca.pem'), certificate: path.join(dir, 'cert.pem'), privateKey: path.join(dir, 'key.pem') };
  fs.writeFileSync(files.caFile, chain.root.certPem);
  fs.writeFileSync(files.certificate, chain.leaf.certPem);
  fs.writeFileSync(files.privateKey, chain.leaf.keyPem, { mode: 0o600 });
  return files;
}

/** Pebble's config file (keys as in its test/config/pebble-config.json). */
function pebbleConfig(options: PebbleOptions, files: Files, ports: { listen: number; management: number; tls: number }): object {
  return {
    pebble: {
      listenAddress: `127.0.0.1:${ports.listen}`,
      managementListenAddress: `127.0.0.1:${ports.management}`,
      certificate: files.certificate,
      privateKey: files.privateKey,
      httpPort: options.httpPort,
      tlsPort: ports.tls,
      ocspResponderURL: '',
      externalAccountBindingRequired: options.eab !== undefined,
      externalAccountMACKeys: options.eab ?? {},
      ...(options.certificateValiditySeconds === undefined ? {} : { certificateValidityPeriod: options.certificateValiditySeconds }),
    },
  };
}

/** Pebble's environment: no validation sleeps, no authorization reuse, and the nonce rejection rate asked for. */
function pebbleEnv(options: PebbleOptions): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PEBBLE_VA_NOSLEEP: '1',
    PEBBLE_WFE_NONCEREJECT: String(options.nonceRejectPercent ?? 0),
    PEBBLE_AUTHZREUSE: '0',
  };
}

interface Running {
  child: ChildProcess;
  /** Settles once the process has exited and its output is read (or it could not be spawned). */
  exited: Promise<void>;
}

/**
 * Keeps `child` and its output pipes from holding the test process open, so a test that forgets
 * close() still ends (and the process.on('exit') safety net kills Pebble) instead of hanging.
 */
function letTestProcessExit(child: ChildProcess): void {
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as net.Socket | null)?.unref();
}

/** Spawns Pebble, appending its stdout and stderr to the log through `append`. */
function spawnPebble(binary: string, args: string[], env: NodeJS.ProcessEnv, append: (text: string) => void): Running {
  const child = spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.setEncoding('utf8').on('data', append);
  child.stderr?.setEncoding('utf8').on('data', append);
  letTestProcessExit(child);
  const exited = new Promise<void>((resolve) => {
    child.once('close', (code, signal) => {
      append(`[pebble exited: ${signal ?? `code ${code}`}]\n`);
      resolve();
    });
    child.once('error', (error) => {
      append(`[pebble could not be spawned: ${error.message}]\n`);
      resolve();
    });
  });
  return { child, exited };
}

/** Polls the directory until it answers 200; throws with the logs when Pebble exits or the deadline passes. */
async function waitForDirectory(running: Running, directoryUrl: string, ca: string, logs: () => string): Promise<void> {
  let exited = false;
  void running.exited.then(() => (exited = true));
  const deadline = Date.now() + START_TIMEOUT_MS;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (exited) throw new Error(`pebble exited before its directory answered:\n${logs()}`);
    try {
      const response = await httpsGet(directoryUrl, ca);
      if (response.status === 200) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
  throw new Error(`pebble did not answer ${directoryUrl} within ${START_TIMEOUT_MS / 1000} s (${last}):\n${logs()}`);
}

/** Kills the process (SIGTERM, SIGKILL after STOP_GRACE_MS) and waits until it has exited. */
async function kill(running: Running): Promise<void> {
  running.child.kill('SIGTERM');
  const timer = setTimeout(() => running.child.kill('SIGKILL'), STOP_GRACE_MS);
  await running.exited;
  clearTimeout(timer);
}

/** Starts Pebble on free loopback ports with a fresh HTTPS certificate and waits until its directory answers. */
export async function startPebble(options: PebbleOptions): Promise<Pebble> {
  const binary = pebbleBinary();
  if (binary === undefined) throw new Error('pebble is not installed (Debian package `pebble`; see scripts/ensure-test-tools.sh)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-pebble-'));
  const files = await writeTlsFiles(dir);
  const ca = fs.readFileSync(files.caFile, 'utf8');
  const ports = { listen: await freePort(), management: await freePort(), tls: await freePort() };
  const configFile = path.join(dir, 'pebble-config.json');
  fs.writeFileSync(configFile, JSON.stringify(pebbleConfig(options, files, ports), null, 2));
  const args = ['-config', configFile, '-dnsserver', options.dnsServer];
  const env = pebbleEnv(options);
  const directoryUrl = `https://127.0.0.1:${ports.listen}/dir`;
  const managementUrl = `https://127.0.0.1:${ports.management}`;

  let log = '';
  const logs = () => log;
  let running: Running | undefined;
  const killOnExit = () => running?.child.kill('SIGKILL');
  process.on('exit', killOnExit);

  const pebble: Pebble = {
    directoryUrl,
    caFile: files.caFile,
    logs,
    async issuanceRoots() {
      const response = await httpsGet(`${managementUrl}/roots/0`, ca);
      if (response.status !== 200) throw new Error(`GET /roots/0 on pebble's management interface: HTTP ${response.status} ${response.body}`);
      return [response.body];
    },
    async start() {
      if (running) throw new Error('pebble is already running');
      running = spawnPebble(binary, args, env, (text) => (log += text));
      await waitForDirectory(running, directoryUrl, ca, logs);
    },
    async stop() {
      if (!running) return;
      await kill(running);
      running = undefined;
    },
    async close() {
      await pebble.stop();
      process.off('exit', killOnExit);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await pebble.start();
  } catch (error) {
    await pebble.close();
    throw error;
  }
  return pebble;
}
