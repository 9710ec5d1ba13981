// What the benchmark and its upstream child (bench/upstream.ts) say to each other over IPC, and
// the bodies the upstream serves. Kept apart so that importing it runs nothing.

/** The bodies served: GET /small and GET /large. */
export const SMALL_BYTES = 100;
export const LARGE_BYTES = 1024 * 1024;

export type ToUpstream = { kind: 'agent'; token: string; serverAddr: string; caPem: string };
export type FromUpstream = { kind: 'ready'; httpPort: number; httpsPort: number } | { kind: 'bound'; url: string } | { kind: 'failed'; error: string };
