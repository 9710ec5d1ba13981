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
}

export interface LoadTool {
  readonly name: 'wrk' | 'autocannon';
  /** The command line's shape, for the header of the report. */
  readonly shape: string;
  run(target: LoadTarget, seconds: number): Promise<LoadResult>;
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

function onPath(command: string): string | undefined {
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

/** Parses wrk's text report (run with --latency). Exported for the parser's own check. */
export function parseWrk(output: string): LoadResult {
  const rate = /^Requests\/sec:\s+([\d.]+)/m.exec(output);
  if (!rate) throw new Error(`could not read Requests/sec from wrk's output:\n${output}`);
  const p99 = /^\s+99(?:\.0+)?%\s+([\d.]+)(us|ms|s|m|h)\s*$/m.exec(output);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    rate: Number(rate[1]),
    p99Ms: p99 ? Number(p99[1]) * LATENCY_UNITS_MS[p99[2]!]! : undefined,
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    errors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}

function wrkTool(wrk: string, connections: number): LoadTool {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'edgeplane-bench-'));
  let scripts = 0;
  return {
    name: 'wrk',
    shape: `${wrk} -t1 -c${connections} -d<seconds>s --latency --timeout ${REQUEST_TIMEOUT_SECONDS}s -H '<header>: <value>'… <url>   (POST: -s <temp>.lua setting wrk.method, wrk.body, wrk.headers)`,
    async run(target, seconds) {
      const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', `${REQUEST_TIMEOUT_SECONDS}s`];
      if (target.method === 'GET' && target.body === undefined) {
        for (const [name, value] of Object.entries(target.headers)) args.push('-H', `${name}: ${value}`);
      } else {
        const lua = [
          `wrk.method = ${luaString(target.method)}`,
          ...(target.body !== undefined ? [`wrk.body = ${luaString(target.body)}`] : []),
          ...Object.entries(target.headers).map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`),
          '',
        ].join('\n');
        const script = path.join(tmp, `request-${++scripts}.lua`);
        fs.writeFileSync(script, lua);
        args.push('-s', script);
      }
      args.push(target.url);
      return parseWrk(await runChild(wrk, args, seconds * 1000 + CHILD_GRACE_MS));
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
}

function autocannonTool(connections: number): LoadTool {
  const bin = fileURLToPath(new URL('../node_modules/.bin/autocannon', import.meta.url));
  if (!fs.existsSync(bin)) throw new Error(`neither wrk (on PATH) nor ${bin} was found; install wrk or run npm install`);
  return {
    name: 'autocannon',
    shape: `node ${path.relative(process.cwd(), bin)} -c ${connections} -d <seconds> --json --no-progress -m <method> -H '<header>=<value>'… [-b <body>] <url>`,
    async run(target, seconds) {
      const args = [
        bin,
        '-c',
        String(connections),
        '-d',
        String(seconds),
        '-t',
        String(REQUEST_TIMEOUT_SECONDS),
        '--json',
        '--no-progress',
        '-m',
        target.method,
      ];
      for (const [name, value] of Object.entries(target.headers)) args.push('-H', `${name}=${value}`);
      if (target.body !== undefined) args.push('-b', target.body);
      args.push(target.url);
      const out = await runChild(process.execPath, args, seconds * 1000 + CHILD_GRACE_MS);
      const json = JSON.parse(out.slice(out.indexOf('{'))) as AutocannonJson;
      return { rate: json.requests.average, p99Ms: json.latency.p99, non2xx: json.non2xx, errors: json.errors + json.timeouts };
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
