// Every kind of background job the runner serves (certificate issuance and renewal come next).
// A kind is defined once with defineJob (src/jobs/runner.ts) and listed here.
import type { JobDefinition } from './runner.js';

export const jobKinds: readonly JobDefinition[] = [];
