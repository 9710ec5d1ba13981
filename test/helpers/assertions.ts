// Assertions the resource tests share: a create that must succeed, and an error answer with its
// status, its code and (optionally) what its message must mention.
import assert from 'node:assert/strict';
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
