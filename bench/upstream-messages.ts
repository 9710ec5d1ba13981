// What the benchmark and its upstream child (bench/upstream.ts) say to each other over IPC, and
// the bodies the upstream serves. Kept apart so that importing it runs nothing.

/** The body of GET /small (GET /download?bytes=N sends as many as asked). */
export const SMALL_BYTES = 100;

export type ToUpstream = { kind: 'agent'; token: string; serverAddr: string; caPem: string };
export type FromUpstream = { kind: 'ready'; httpPort: number; httpsPort: number } | { kind: 'bound'; url: string } | { kind: 'failed'; error: string };
