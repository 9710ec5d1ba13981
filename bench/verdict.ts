// What the data path's rows share: a line of the summary, which each row's file makes and
// bench/data-path.ts prints, and what a row that loads a running server is given.
import type { BenchApi } from './api-client.js';
import type { LoadTool } from './load.js';
import type { ServerReady } from './server-process.js';

/** One line of the summary: a measured figure, what it is printed beside, its target, and whether it is met. */
export interface Verdict {
  row: string;
  what: string;
  measured: string;
  beside: string;
  target: string;
  /** n/a: the baseline the target is about was not measured (skipped or failed). */
  outcome: 'pass' | 'short' | 'n/a';
}

/** A row that puts load on an edgeplane running in its child process. */
export interface LoadedRowContext {
  tool: LoadTool;
  seconds: number;
  warmupSeconds: number;
  /** Throws when the run was interrupted. */
  checkInterrupted(): void;
  server: ServerReady;
  /** An account of that server. */
  api: BenchApi;
  verdicts: Verdict[];
}
