// Values ready now or later. SQLite reads answer at once (better-sqlite3 is synchronous) and
// PostgreSQL's with a promise; the read path of a GET chains its steps with `then` below, so
// that on SQLite the whole read runs in one step, with no promise made and no microtask waited
// for between the steps, and on PostgreSQL as before.
export type MaybePromise<T> = T | Promise<T>;

/** `next(value)`: at once when `value` is ready, else once it resolves. */
export function then<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
