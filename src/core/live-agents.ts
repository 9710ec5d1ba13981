// What the data plane and the rest of the process say to each other about live agents: the
// sessions and tunnels this process holds (for the API's lists and the many-instance records), the
// targets public connections are sent to, and the commands the API sends to an agent. Types only.
import type { Duplex } from 'node:stream';

export type EndpointProto = 'http' | 'https' | 'tcp' | 'tls';

/**
 * What an agent's Bind asked its endpoint to enforce. Empty here: edges/agent-options.ts fills it
 * in by declaration merging, as the kinds fill in the store's `Database`, so that core imports
 * nothing above it.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by declaration merging (edges/agent-options.ts)
export interface EndpointModules {}

/** An agent session held by this process, as the API shows it. */
export interface LiveSession {
  id: string;
  accountId: string;
  credentialId: string;
  os: string;
  agentVersion: string;
  metadata: string;
  ip: string;
  /** The region the session is served in (this instance's first region). */
  region: string;
  /** How the agent came in: `ngrok/tls` for agents of the SDK; `ssh` later. */
  transport: string;
  startedAt: Date;
}

/** A tunnel held by this process: an endpoint bound by an agent, or a labeled tunnel. */
export interface LiveTunnel {
  /** `tn_…`; also the id in the agent's BindResp / StartTunnelWithLabelResp and its ProxyHeaders. */
  id: string;
  accountId: string;
  sessionId: string;
  /** For a bound endpoint; undefined for a labeled tunnel. */
  endpoint?: {
    /** `ep_…`, stable for as long as the tunnel is. */
    id: string;
    proto: EndpointProto;
    /** `https://app.example.com`, `tcp://1.tcp.example.com:10001`, `tls://app.example.com`. */
    publicUrl: string;
    /** `app.example.com:443`, `1.tcp.example.com:10001`. */
    hostport: string;
    /** The reserved domain or address it is served on, when it is one of the account's. */
    domainId?: string;
    tcpAddrId?: string;
  };
  /** A labeled tunnel's labels; undefined for a bound endpoint. */
  labels?: Record<string, string>;
  metadata: string;
  forwardsTo: string;
  startedAt: Date;
  /** An endpoint's Bind, sealed, when it asks for modules: written with the tunnel so any instance can enforce them. */
  sealedOptions?: string;
}

/** What this process holds now; the many-instance records are written from it. */
export interface LiveState {
  sessions(): LiveSession[];
  tunnels(): LiveTunnel[];
}

export type SessionCommand = { kind: 'restart' } | { kind: 'stop' } | { kind: 'update'; version: string; permitMajorVersion: boolean };

/**
 * The outcome of a command sent to an agent: `sent` (the agent said it will), `refused` (the agent
 * answered with an error, given), `not_here` (no such live session in this process), `failed` (the
 * session ended or did not answer in time).
 */
export type CommandOutcome = { outcome: 'sent' } | { outcome: 'refused'; error: string } | { outcome: 'not_here' } | { outcome: 'failed'; reason: string };

export interface SessionCommands {
  send(sessionId: string, command: SessionCommand): Promise<CommandOutcome>;
}

/** Where a public connection goes: a tunnel of a live agent session in this process. */
export interface TunnelTarget {
  tunnelId: string;
  accountId: string;
  proto: EndpointProto;
  /**
   * A bound endpoint's: its id, the reserved domain or address it is on (whose endpoint
   * configuration applies), and the modules its Bind asked for (none: served as it is).
   */
  endpoint?: { id: string; domainId?: string; tcpAddrId?: string; modules?: EndpointModules };
  /**
   * A stream to the agent for one public connection: its bytes go to the agent's upstream and
   * back. `clientAddr` is the public client's `ip:port`. Throws when the session has ended.
   */
  connect(clientAddr: string): Duplex;
}

/** What the public listeners ask of the live tunnels and the certificates. */
export interface IngressDirectory {
  /** The tunnel serving `host` (lower case, no port) for this scheme; undefined when none is online. */
  http(host: string, scheme: 'http' | 'https'): TunnelTarget | undefined;
  /** The `tls` tunnel for this SNI name (TLS passed through to the agent); undefined when none. */
  tls(serverName: string): TunnelTarget | undefined;
  /** The TCP tunnel bound on this address's port. */
  tcp(port: number): TunnelTarget | undefined;
  /**
   * A labeled tunnel of the account whose labels include every one of `labels` with the same
   * value (a tunnel group backend's), taking turns among them; undefined when none is online here.
   */
  labeled(accountId: string, labels: Readonly<Record<string, string>>): TunnelTarget | undefined;
  /**
   * The account's internal endpoint at `url` (`https://name.internal`: scheme and lower-case
   * name), which forward-internal sends requests to; undefined when none is online here. Internal
   * endpoints are the binding account's only, and no public listener serves them.
   */
  internal(accountId: string, url: string): TunnelTarget | undefined;
}
