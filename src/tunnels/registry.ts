// The agent sessions live in this process: who they are (account, credential, what the agent said
// of itself) and how to end them. In memory only: a session is a connection to this process.
// Recently ended sessions are remembered for a while, so that an agent that reconnects keeps its
// session id (resumption); that memory is bounded.
import { newId } from '../core/ids.js';

export interface AgentSessionInfo {
  id: string;
  accountId: string;
  credentialId: string;
  os: string;
  /** The agent's version, as it reports it. */
  version: string;
  clientType: string;
  metadata: string;
  /** The agent's address as this process sees it. */
  ip: string;
  startedAt: Date;
}

interface Live {
  info: AgentSessionInfo;
  end: (reason: string) => void;
}

export interface RegistryOptions {
  /** How long an ended session's id can be resumed (default 10 minutes). */
  resumeWindowMs?: number;
  /** Ended sessions remembered at most (default 10 000); the oldest are forgotten first. */
  maxRemembered?: number;
  now?: () => number;
}

export class AgentSessionRegistry {
  private readonly live = new Map<string, Live>();
  /** Ended sessions by id: their credential and when they ended, oldest first (Map order). */
  private readonly ended = new Map<string, { credentialId: string; endedAt: number }>();
  private readonly resumeWindowMs: number;
  private readonly maxRemembered: number;
  private readonly now: () => number;

  constructor(options: RegistryOptions = {}) {
    this.resumeWindowMs = options.resumeWindowMs ?? 10 * 60_000;
    this.maxRemembered = options.maxRemembered ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * The id a new session of this credential takes: the one the agent asks for when it names a
   * live or recently ended session of the same credential, else a new one.
   */
  sessionIdFor(credentialId: string, requested: string): { id: string; resumed: boolean } {
    if (requested !== '') {
      const live = this.live.get(requested);
      if (live?.info.credentialId === credentialId) return { id: requested, resumed: true };
      const ended = this.ended.get(requested);
      if (ended?.credentialId === credentialId && this.now() - ended.endedAt <= this.resumeWindowMs) return { id: requested, resumed: true };
    }
    return { id: newId('ts'), resumed: false };
  }

  /**
   * Records a session. A live session with the same id (the agent reconnected before its old
   * connection was noticed dead) is ended first: one connection per session id.
   */
  add(info: AgentSessionInfo, end: (reason: string) => void): void {
    const previous = this.live.get(info.id);
    if (previous) {
      this.live.delete(info.id);
      previous.end('the agent resumed this session on a new connection');
    }
    this.ended.delete(info.id);
    this.live.set(info.id, { info, end });
  }

  /** Forgets a session that ended (no-op when `info` was already replaced by a resumption). */
  remove(info: AgentSessionInfo): void {
    if (this.live.get(info.id)?.info !== info) return;
    this.live.delete(info.id);
    this.ended.set(info.id, { credentialId: info.credentialId, endedAt: this.now() });
    while (this.ended.size > this.maxRemembered) this.ended.delete(this.ended.keys().next().value!);
  }

  list(accountId: string): AgentSessionInfo[] {
    return [...this.live.values()].filter((s) => s.info.accountId === accountId).map((s) => ({ ...s.info }));
  }

  count(accountId: string): number {
    let n = 0;
    for (const s of this.live.values()) if (s.info.accountId === accountId) n++;
    return n;
  }

  get size(): number {
    return this.live.size;
  }

  /** The credentials of the live sessions, each once. */
  credentialIds(): string[] {
    return [...new Set([...this.live.values()].map((s) => s.info.credentialId))];
  }

  /** Ends every session of a credential (it was deleted); they cannot be resumed. Returns how many. */
  endForCredential(credentialId: string, reason: string): number {
    const ending = [...this.live.values()].filter((s) => s.info.credentialId === credentialId);
    for (const s of ending) {
      this.live.delete(s.info.id);
      s.end(reason);
    }
    for (const [id, e] of this.ended) if (e.credentialId === credentialId) this.ended.delete(id);
    return ending.length;
  }

  /** What the credentials kind is told once a delete commits (deps' `credentialDeleted`): its sessions end. */
  readonly credentialDeleted = (credentialId: string): void => void this.endForCredential(credentialId, 'the credential was deleted');

  /** Ends one session; the agent may resume it. False when it is not live here. */
  end(sessionId: string, reason: string): boolean {
    const live = this.live.get(sessionId);
    live?.end(reason);
    return live !== undefined;
  }

  /** Ends every session (shutdown). */
  endAll(reason: string): void {
    for (const s of [...this.live.values()]) s.end(reason);
  }
}
