// A line of the data path's summary, which each row's file makes and bench/data-path.ts prints.

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
