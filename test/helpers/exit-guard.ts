// `node --test` waits for each test file's process to exit. A file whose agent SDK session could
// not be closed (the SDK's "transport error" under load, seen once) keeps a native handle open
// and would hold the whole run until CI's limit: such a process is ended 10 s after its file's
// last test, with the exit code its tests set, and says so. Not --test-force-exit: on Node 20 it
// ended a file while its last suite still ran, and the run reported neither those tests nor a
// failure (the 12 "provider particulars" tests of webhooks-m-z, missing from a passing run).
import { after } from 'node:test';

const GRACE_MS = 10_000;

// Only in a file run by `node --test` (its child processes have NODE_TEST_CONTEXT), never in a
// process that merely imports the helpers (the benchmark's server child).
if (process.env.NODE_TEST_CONTEXT) {
  after(() => {
    setTimeout(() => {
      console.error(`exit guard: the process was still up ${GRACE_MS / 1000} s after its last test (a handle left open); ending it`);
      process.exit();
    }, GRACE_MS).unref();
  });
}
