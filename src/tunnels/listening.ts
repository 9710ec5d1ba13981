// What the agent listener and the SSH listener do alike around their sessions: listen on the
// configured address, stop accepting once (a drain), and check the credentials of their live
// sessions again now and then, ending those whose credential is gone or unusable.
import type net from 'node:net';
import type { Logger } from 'pino';
import type { AgentSessionRegistry } from './registry.js';

/** Listens on host:port; rejects with the bind's error (listen-errors.ts says which setting moves it). */
export function listenOn(server: net.Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** What stops the server accepting, once however often it is called; connections open go on. */
export function stopsAccepting(server: net.Server): () => void {
  let accepting = true;
  return () => {
    if (!accepting) return;
    accepting = false;
    server.close();
  };
}

export interface CredentialCheck {
  registry: AgentSessionRegistry;
  everyMs: number;
  log: Logger;
  /** The credential ids this listener's sessions hold (the other listener checks its own). */
  ours: (credentialId: string) => boolean;
  /** Of `ids`, those that still let a session in. */
  usable: (ids: string[]) => Promise<Set<string>>;
  /** Why the sessions of the others end. */
  reason: string;
}

/**
 * A delete through this instance's API ends its sessions at once (the kinds' hooks); this catches
 * the rest: a credential deleted with its owner or on another instance, a bot made inactive.
 * Returns what stops it.
 */
export function checkCredentials(check: CredentialCheck): () => void {
  const timer = setInterval(() => {
    const ids = check.registry.credentialIds().filter(check.ours);
    if (ids.length === 0) return;
    check
      .usable(ids)
      .then((usable) => {
        for (const id of ids) if (!usable.has(id)) check.registry.endForCredential(id, check.reason);
      })
      .catch((err: unknown) => check.log.warn({ err }, 'agent sessions: credentials could not be checked; the next check tries again'));
  }, check.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The tuning given, without its undefined entries (so that the defaults stand for them). */
export function definedOnly<T extends object>(tuning: T): Partial<T> {
  return Object.fromEntries(Object.entries(tuning).filter(([, v]) => v !== undefined)) as Partial<T>;
}
