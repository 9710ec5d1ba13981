// Calls to a child process of the benchmark over IPC: the data-path rows run edgeplane and the
// lightweight agents in processes of their own (so that a process's memory and CPU time are
// edgeplane's alone), and ask them for things (an account, their memory) by name. Each call
// carries an id and gets one reply; a child that exits rejects every call still waiting.
import { fork, type ChildProcess } from 'node:child_process';

/** What a child answers: one function per call name, taking at most one argument. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Calls = Record<string, (args: any) => unknown>;

interface Request {
  id: number;
  call: string;
  args: unknown;
}

type Reply = { id: number; value: unknown } | { id: number; error: string };
/** The first message of a child: its ready value, or why it could not start. */
type Hello = { ready: unknown } | { failed: string };

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export class ChildRpc<C extends Calls> {
  private next = 1;
  private readonly waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private exitReason: string | undefined;

  private constructor(
    readonly child: ChildProcess,
    private readonly name: string,
  ) {
    child.on('message', (m: Reply | Hello) => {
      if (!('id' in m)) return;
      const waiter = this.waiting.get(m.id);
      if (!waiter) return;
      this.waiting.delete(m.id);
      if ('error' in m) waiter.reject(new Error(`${name}: ${m.error}`));
      else waiter.resolve(m.value);
    });
    child.on('exit', (code, signal) => {
      this.exitReason = `${name} exited with ${signal ?? `code ${code}`}`;
      for (const waiter of this.waiting.values()) waiter.reject(new Error(this.exitReason));
      this.waiting.clear();
    });
  }

  /**
   * Forks `script` (TypeScript, through tsx's loader) with IPC and waits for its ready value.
   * `execArgv` is added to node's own arguments (--expose-gc, --cpu-prof…).
   */
  static async start<C extends Calls, R>(
    script: URL,
    name: string,
    options: { args?: string[]; execArgv?: string[]; timeoutMs?: number } = {},
  ): Promise<{ rpc: ChildRpc<C>; ready: R }> {
    const child = fork(script, options.args ?? [], {
      execArgv: ['--import', import.meta.resolve('tsx'), ...(options.execArgv ?? [])],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const rpc = new ChildRpc<C>(child, name);
    const ready = await new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name}: not ready within ${(options.timeoutMs ?? 60_000) / 1000} s`)), options.timeoutMs ?? 60_000);
      const onMessage = (m: Reply | Hello) => {
        if ('ready' in m) done(() => resolve(m.ready as R));
        else if ('failed' in m) done(() => reject(new Error(`${name}: ${m.failed}`)));
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
        done(() => reject(new Error(`${name} exited with ${signal ?? `code ${code}`} before it was ready`)));
      const done = (then: () => void) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        then();
      };
      child.on('message', onMessage);
      child.on('exit', onExit);
    }).catch(async (error: unknown) => {
      await rpc.stop();
      throw error;
    });
    return { rpc, ready };
  }

  get pid(): number {
    return this.child.pid!;
  }

  call<K extends keyof C & string>(call: K, args?: Parameters<C[K]>[0], timeoutMs = 120_000): Promise<Awaited<ReturnType<C[K]>>> {
    if (this.exitReason) return Promise.reject(new Error(this.exitReason));
    const id = this.next++;
    return new Promise<Awaited<ReturnType<C[K]>>>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${this.name}: ${call} had no answer within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.waiting.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as Awaited<ReturnType<C[K]>>);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.child.send({ id, call, args } satisfies Request);
    });
  }

  /** Disconnects (the child cleans up and exits), then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    const { child } = this;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (child.connected) child.disconnect();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    if ((await Promise.race([exited, late])) === 'late') {
      child.kill('SIGKILL');
      await exited;
    }
    clearTimeout(timer);
  }

  /** Kills the child at once (the benchmark is exiting). */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/**
 * The child's side: answers each call with its handler, says it is ready once `start` resolves
 * (or that it failed), and calls `stop` when the benchmark goes away (then exits).
 */
export function serveCalls<C extends Calls>(start: () => Promise<unknown>, handlers: C, stop: () => Promise<void>): void {
  if (!process.send) throw new Error('this script runs as a forked child of the benchmark');
  const send = (m: Reply | Hello) => process.send!(m);
  process.on('message', (m: Request) => {
    const handler = handlers[m.call];
    if (!handler) return send({ id: m.id, error: `no call '${m.call}'` });
    Promise.resolve()
      .then(() => handler(m.args))
      .then(
        (value) => send({ id: m.id, value }),
        (error: unknown) => send({ id: m.id, error: message(error) }),
      );
  });
  process.on('disconnect', () => {
    // The parent is gone: nothing is lost by exiting once cleaned up (or after 10 s regardless).
    setTimeout(() => process.exit(0), 10_000).unref();
    void stop()
      .catch(() => {})
      .finally(() => process.exit(0));
  });
  start().then(
    (ready) => send({ ready }),
    (error: unknown) => {
      send({ failed: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      process.exit(1);
    },
  );
}
