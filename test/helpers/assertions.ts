// Assertions the tests share: a create that must succeed, an error answer with its status, its
// code and (optionally) what its message must mention, and an ApiError a function throws.
import assert from 'node:assert/strict';
import { ApiError } from '../../src/core/errors.js';
import type { Api } from './harness.js';

/** POSTs `body` to `path`, asserts a 201 and returns the created resource. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are read field by field
export async function created(api: Api, path: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await api.post(path, body);
  assert.equal(res.status, 201, `${path}: ${res.text}`);
  return res.json;
}

/** The answer is the error `code` with `status`, and its message mentions `mentions` (a literal string or a pattern). */
export function assertError(
  res: { status: number; json: { error_code: string; msg: string } },
  status: number,
  code: string,
  mentions?: string | RegExp,
): void {
  assert.equal(res.status, status, JSON.stringify(res.json));
  assert.equal(res.json.error_code, code, res.json.msg);
  if (mentions === undefined) return;
  if (typeof mentions === 'string') assert.ok(res.json.msg.includes(mentions), `${res.json.msg} should mention ${mentions}`);
  else assert.match(res.json.msg, mentions);
}

/** Runs `fn`, expects it to throw an ApiError with `code`, and returns it for more checks. */
export function throwsApiError(fn: () => unknown, code: number): ApiError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ApiError, `expected ApiError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  assert.equal(caught.errorCode, `ERR_EP_${code}`);
  return caught;
}

/** Polls `check` every `pollMs` until it holds; fails naming `what` once `timeoutMs` have passed. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  { timeoutMs = 10_000, pollMs = 10 }: { timeoutMs?: number; pollMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * Resolves once `check` holds, looked at now and after each event `observe` reports (it returns
 * what stops it); fails naming `what` after `timeoutMs`.
 */
export function observed(observe: (listener: () => void) => () => void, check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  if (check()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const stop = observe(() => {
      if (!check()) return;
      stop();
      clearTimeout(timer);
      resolve();
    });
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`${what} did not happen within ${timeoutMs / 1000} s`));
    }, timeoutMs);
  });
}
