// Column types that differ between the stores.
import { sql, type Expression } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';

/** Ids compare byte-wise in both stores, so that "newest first" (descending id) is the same order. */
export function idType(dialect: Dialect): Expression<unknown> | 'text' {
  return dialect === 'postgres' ? sql`text collate "C"` : 'text';
}
