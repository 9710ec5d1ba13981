// The benchmark's load generator, always in a child process: wrk when it is on PATH, otherwise
// autocannon's CLI. Run in the benchmark's own process (even in a worker thread, which shares
// the process's CPU time and its garbage collector's pauses), the generator's cost per request
// lands on the servers being measured and pulls every edgeplane/bare ratio towards 1.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LoadTarget {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /**
   * For an https URL whose host is an address: the TLS server name (SNI) to send, as a client that
   * resolved that name to the address would. Neither tool checks the server's certificate. Only
   * `run` honours it.
   */
  servername?: string;
}

export interface LoadResult {
  /** Completed requests per second (any status). */
  rate: number;
  /** 99th percentile latency in milliseconds, when the tool reports it. */
  p99Ms: number | undefined;
  /** Responses that were not 2xx (wrk: status ≥ 400, as wrk counts them). */
  non2xx: number;
  /** Connection, read and write errors and timeouts. */
  errors: number;
  /** Bytes received per second (response heads and bodies), when the tool reports it. */
  bytesPerSec?: number;
}

export interface LoadTool {
  readonly name: 'wrk' | 'autocannon';
  /** The command line's shape, for the header of the report. */
  readonly shape: string;
  run(target: LoadTarget, seconds: number): Promise<LoadResult>;
  /**
   * One load of `connections` connections spread evenly over several servers that answer the
   * same request (as a balancer would spread it), with the rates summed.
   */
  spread(targets: LoadTarget[], seconds: number): Promise<LoadResult>;
  /** Kills whatever child is still running and removes temporary files. */
  dispose(): void;
}

const REQUEST_TIMEOUT_SECONDS = 10;
/** A child running longer than its duration plus this is killed: the run has hung. */
const CHILD_GRACE_MS = 30_000;

const live = new Set<ChildProcess>();

/** Kills every load-generator child still running (on an interrupt, or at exit). */
export function killLoadChildren(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
}

/** The command's path when it is an executable file on PATH. */
export function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Runs a command to completion, collecting its output; rejects on a non-zero exit. */
function runChild(command: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      live.delete(child);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      const out = Buffer.concat(stdout).toString('utf8');
      if (code === 0) return resolve(out);
      const err = Buffer.concat(stderr).toString('utf8');
      reject(new Error(`${path.basename(command)} exited with ${signal ?? `code ${code}`}: ${(err || out).trim().slice(0, 500)}`));
    });
  });
}

/** A Lua string literal for any text: every byte outside printable ASCII, quotes and backslashes as \ddd. */
function luaString(value: string): string {
  let out = '"';
  for (const byte of Buffer.from(value, 'utf8')) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`;
  }
  return out + '"';
}

const LATENCY_UNITS_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
/** wrk prints Transfer/sec in binary units: KB is 1024 bytes. */
const TRANSFER_UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** Parses wrk's text report (run with --latency). Exported for the parser's own check. */
export function parseWrk(output: string): LoadResult {
  const rate = /^Requests\/sec:\s+([\d.]+)/m.exec(output);
  if (!rate) throw new Error(`could not read Requests/sec from wrk's output:\n${output}`);
  const p99 = /^\s+99(?:\.0+)?%\s+([\d.]+)(us|ms|s|m|h)\s*$/m.exec(output);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const transfer = /^Transfer\/sec:\s+([\d.]+)([KMGT]?)B\s*$/m.exec(output);
  return {
    rate: Number(rate[1]),
    p99Ms: p99 ? Number(p99[1]) * LATENCY_UNITS_MS[p99[2]!]! : undefined,
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    errors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    ...(transfer && { bytesPerSec: Number(transfer[1]) * TRANSFER_UNITS[transfer[2]!]! }),
  };
}

function wrkTool(wrk: string, connections: number): LoadTool {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-bench-'));
  let scripts = 0;
  const writeScript = (lines: string[]): string => {
    const script = path.join(tmp, `request-${++scripts}.lua`);
    fs.writeFileSync(script, [...lines, ''].join('\n'));
    return script;
  };
  /** The request in Lua, for a script (POST, or a spread load). */
  const requestLua = (target: LoadTarget): string[] => [
    `wrk.method = ${luaString(target.method)}`,
    ...(target.body !== undefined ? [`wrk.body = ${luaString(target.body)}`] : []),
    ...Object.entries(target.headers).map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`),
  ];
  const execute = async (threads: number, seconds: number, extra: string[], url: string): Promise<LoadResult> => {
    const args = [`-t${threads}`, `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', `${REQUEST_TIMEOUT_SECONDS}s`, ...extra, url];
    return parseWrk(await runChild(wrk, args, seconds * 1000 + CHILD_GRACE_MS));
  };
  return {
    name: 'wrk',
    shape: `${wrk} -t1 -c${connections} -d<seconds>s --latency --timeout ${REQUEST_TIMEOUT_SECONDS}s -H '<header>: <value>'… <url>   (POST: -s <temp>.lua setting wrk.method, wrk.body, wrk.headers; row f: -t<servers> with a setup() giving each thread one server's address; edge rows: the URL names the server (SNI) and the script's wrk.resolve gives 127.0.0.1)`,
    async run(target, seconds) {
      if (target.servername !== undefined) {
        // wrk sends the URL's host as the server name and resolves it with wrk.resolve, which a
        // script may replace: the URL names the server, and the script connects to the address.
        const url = new URL(target.url);
        const address = url.hostname;
        url.hostname = target.servername;
        const script = writeScript([
          ...requestLua(target),
          'function wrk.resolve(host, service)',
          `  wrk.addrs = wrk.lookup(${luaString(address.replace(/^\[|\]$/g, ''))}, service)`,
          'end',
        ]);
        return execute(1, seconds, ['-s', script], url.toString());
      }
      if (target.method === 'GET' && target.body === undefined) {
        const headers = Object.entries(target.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
        return execute(1, seconds, headers, target.url);
      }
      return execute(1, seconds, ['-s', writeScript(requestLua(target))], target.url);
    },
    async spread(targets, seconds) {
      // wrk connects each thread to one address, which setup() may set: one thread per server,
      // the connections split evenly between them by wrk.
      const addresses = targets.map((t) => new URL(t.url)).map((u) => `wrk.lookup(${luaString(u.hostname)}, ${luaString(u.port)})[1]`);
      const script = writeScript([
        ...requestLua(targets[0]!),
        `local addresses = { ${addresses.join(', ')} }`,
        'local threads = 0',
        'function setup(thread)',
        '  thread.addr = addresses[threads % #addresses + 1]',
        '  threads = threads + 1',
        'end',
      ]);
      return execute(targets.length, seconds, ['-s', script], targets[0]!.url);
    },
    dispose() {
      killLoadChildren();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

interface AutocannonJson {
  requests: { average: number };
  latency: { p99?: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  throughput?: { average: number };
}

function autocannonTool(connections: number): LoadTool {
  const bin = fileURLToPath(new URL('../node_modules/.bin/autocannon', import.meta.url));
  if (!fs.existsSync(bin)) throw new Error(`neither wrk (on PATH) nor ${bin} was found; install wrk or run npm install`);
  const execute = async (target: LoadTarget, seconds: number, conns: number): Promise<LoadResult> => {
    const args = [bin, '-c', String(conns), '-d', String(seconds), '-t', String(REQUEST_TIMEOUT_SECONDS), '--json', '--no-progress', '-m', target.method];
    for (const [name, value] of Object.entries(target.headers)) args.push('-H', `${name}=${value}`);
    if (target.body !== undefined) args.push('-b', target.body);
    if (target.servername !== undefined) args.push('--servername', target.servername);
    args.push(target.url);
    const out = await runChild(process.execPath, args, seconds * 1000 + CHILD_GRACE_MS);
    const json = JSON.parse(out.slice(out.indexOf('{'))) as AutocannonJson;
    return {
      rate: json.requests.average,
      p99Ms: json.latency.p99,
      non2xx: json.non2xx,
      errors: json.errors + json.timeouts,
      ...(json.throughput && { bytesPerSec: json.throughput.average }),
    };
  };
  return {
    name: 'autocannon',
    shape: `node ${path.relative(process.cwd(), bin)} -c ${connections} -d <seconds> --json --no-progress -m <method> -H '<header>=<value>'… [-b <body>] [--servername <name>] <url>   (row f: one child per server, the connections split between them)`,
    run: (target, seconds) => execute(target, seconds, connections),
    async spread(targets, seconds) {
      // autocannon's CLI loads one URL: one child per server, with the connections split.
      const share = (i: number) => Math.floor(connections / targets.length) + (i < connections % targets.length ? 1 : 0);
      const results = await Promise.all(targets.map((t, i) => execute(t, seconds, Math.max(1, share(i)))));
      return {
        rate: results.reduce((sum, r) => sum + r.rate, 0),
        p99Ms: results.every((r) => r.p99Ms !== undefined) ? Math.max(...results.map((r) => r.p99Ms!)) : undefined,
        non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
        errors: results.reduce((sum, r) => sum + r.errors, 0),
        ...(results.every((r) => r.bytesPerSec !== undefined) && { bytesPerSec: results.reduce((sum, r) => sum + r.bytesPerSec!, 0) }),
      };
    },
    dispose() {
      killLoadChildren();
    },
  };
}

/** wrk when it is on PATH (unless BENCH_LOAD_TOOL=autocannon), otherwise autocannon's CLI. */
export function chooseLoadTool(connections: number): LoadTool {
  const wanted = (process.env.BENCH_LOAD_TOOL ?? '').trim().toLowerCase();
  if (wanted !== '' && wanted !== 'wrk' && wanted !== 'autocannon') throw new Error(`BENCH_LOAD_TOOL must be wrk or autocannon; got '${wanted}'`);
  const wrk = wanted === 'autocannon' ? undefined : onPath('wrk');
  if (wanted === 'wrk' && !wrk) throw new Error('BENCH_LOAD_TOOL=wrk but wrk is not on PATH');
  return wrk ? wrkTool(wrk, connections) : autocannonTool(connections);
}

/** wrk's version line, or undefined. */
export function wrkVersion(): string | undefined {
  const wrk = onPath('wrk');
  if (!wrk) return undefined;
  const result = spawnSync(wrk, ['-v'], { encoding: 'utf8' });
  return `${result.stdout ?? ''}${result.stderr ?? ''}`.split('\n')[0]?.trim() || undefined;
}
