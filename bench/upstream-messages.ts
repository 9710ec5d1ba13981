// What the benchmark and its upstream child (bench/upstream.ts) say to each other over IPC, and
// the bodies the upstream serves. Kept apart so that importing it runs nothing.

/** The body of GET /small (GET /download?bytes=N sends as many as asked). */
export const SMALL_BYTES = 100;

export type ToUpstream = { kind: 'agent'; token: string; serverAddr: string; caPem: string };
/**
 * `hopPort`: a TLS server that only pipes each connection's bytes to the plain HTTP port, the far
 * end of the bare Node relay (bench/node-relays.ts), in the process where the agent runs.
 */
export type FromUpstream =
  { kind: 'ready'; httpPort: number; httpsPort: number; hopPort: number } | { kind: 'bound'; url: string } | { kind: 'failed'; error: string };
