// Writes docs/errors.md from the error catalogue (src/error-catalogue.ts): a fixed introduction, then
// every error's code, status and meaning, sorted by code. test/contract/errors-doc.test.ts fails when
// the file on disk is not what this writes, so after adding or changing an error: `npm run docs:errors`,
// review the diff, and commit it with the change.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ERROR_CATALOGUE, type CatalogueError } from '../src/error-catalogue.js';

export const ERRORS_DOC_FILE = fileURLToPath(new URL('../docs/errors.md', import.meta.url));

const INTRODUCTION = [
  '# Errors',
  '',
  'Every failure answers with one body shape and a stable code:',
  '',
  '```json',
  '{',
  '  "error_code": "ERR_EP_218",',
  '  "status_code": 400,',
  '  "msg": "Your request has not specified an API version. …",',
  '  "details": { "operation_id": "op_2c35SKcQWmbsaTaVJNFFkbaKHUv" }',
  '}',
  '```',
  '',
  '- `error_code` is stable: clients may branch on it. `msg` is for people and may change.',
  '- `details` is always an object; `details.operation_id` is also sent as the `Operation-Id`',
  "  response header and is written in the server's log line for the request.",
  '- Where the public API this one is modelled on has a well-known number for the same condition,',
  '  the number is the same (`218` missing version, `217` bad version, `214` unknown field, …).',
  '- 401 answers carry `WWW-Authenticate: Bearer`; 405 answers carry `Allow`; 503 answers carry',
  '  `Retry-After`.',
  '',
  'The table is generated from the error catalogue (`src/error-catalogue.ts`, which gathers',
  '`src/core/errors.ts` and the `*.errors.ts` files beside the code that throws each error) by',
  '`npm run docs:errors`; `test/contract/errors-doc.test.ts` fails when it is stale.',
];

/** The text of docs/errors.md for these errors: the introduction, then one table row per error, by code. */
export function renderErrorsDoc(errors: readonly CatalogueError[]): string {
  const rows = [...errors].sort((a, b) => a.code - b.code).map(tableRow);
  return [...INTRODUCTION, '', '| code | status | meaning |', '|---|---|---|', ...rows, ''].join('\n');
}

function tableRow(error: CatalogueError): string {
  // A meaning is one table cell: a '|' would end the cell early and a line break the row.
  if (/[|\n]/.test(error.meaning)) throw new Error(`the meaning of ERR_EP_${error.code} (${error.name}) has a '|' or a line break`);
  return `| \`ERR_EP_${error.code}\` | ${error.status} | ${error.meaning} |`;
}

function main(): void {
  const text = renderErrorsDoc(ERROR_CATALOGUE);
  const previous = fs.existsSync(ERRORS_DOC_FILE) ? fs.readFileSync(ERRORS_DOC_FILE, 'utf8') : undefined;
  fs.writeFileSync(ERRORS_DOC_FILE, text);
  const state = previous === undefined ? 'created' : previous === text ? 'unchanged' : 'updated';
  console.log(`${path.relative(process.cwd(), ERRORS_DOC_FILE)}: ${state} (${ERROR_CATALOGUE.length} errors)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main();
}
