// `edgeplane serve` as a real process of its own, for tests that do to the server what could
// crash it (drop its database, stop PostgreSQL): a crash shows as the process's exit, not as
// the test runner's.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
/** The CLI from source: the command and its first arguments, then a command's own. */
export const CLI: readonly [string, ...string[]] = [process.execPath, '--import', 'tsx', path.join(root, 'src/cli.ts')];
export const CLI_CWD = root;

export interface ServeProcess {
  readonly child: ChildProcess;
  /** The address it printed: `http://127.0.0.1:PORT` (EDGEPLANE_TLS=off). */
  readonly base: string;
  /** All it wrote so far, stdout and stderr. */
  output(): string;
  exited(): boolean;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `serve` with `env` (which should listen on 127.0.0.1:0, TLS off) and waits until it listens. */
export async function spawnServe(env: NodeJS.ProcessEnv, startMs = 60_000): Promise<ServeProcess> {
  const child = spawn(CLI[0], [...CLI.slice(1), 'serve'], { cwd: root, env });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within ${startMs} ms:\n${output}`)), startMs);
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`serve exited:\n${output}`));
    });
  });
  return {
    child,
    base,
    output: () => output,
    exited,
    async stop(graceMs = 12_000) {
      if (exited()) return;
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise((resolve) => (timer = setTimeout(resolve, graceMs, 'late')));
      if ((await Promise.race([done, late])) === 'late') {
        child.kill('SIGKILL');
        await done;
      }
      clearTimeout(timer);
    },
  };
}
