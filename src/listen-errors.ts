// A listener that cannot bind at start (its address in use, a port below 1024 without the right,
// an address no interface has) is a settings problem, not a bug: the CLI says so in one line
// that names the address and the setting to change, and exits 2 (docs/operations.md, "Exit
// codes"). Node's error names neither the listener nor its setting; the configured addresses do.
import type { Config } from './config.js';
import { hostPort } from './lib/net-address.js';

const REASONS: Record<string, string> = {
  EADDRINUSE: 'the address is in use (another program, or another edgeplane, listens there)',
  EACCES: 'permission denied (a port below 1024 needs root or CAP_NET_BIND_SERVICE)',
  EADDRNOTAVAIL: 'no network interface of this machine has that address',
};

/** A listener that could not bind: `message` is the one line the CLI prints. */
export class ListenError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'ListenError';
  }
}

type Bind = { setting: string; host: string; port: number };

/** Every listener the settings start, with the setting that places it. */
function configuredListeners(config: Config): Bind[] {
  const at = (setting: string, where: { host: string; port: number } | undefined) => (where ? [{ setting, ...where }] : []);
  return [
    ...at('EDGEPLANE_LISTEN', config.runMode === 'worker' ? undefined : config.listen),
    ...at('EDGEPLANE_AGENT_LISTEN', config.agentListen),
    ...at('EDGEPLANE_INGRESS_HTTPS_LISTEN', config.ingress.https),
    ...at('EDGEPLANE_INGRESS_HTTP_LISTEN', config.ingress.http),
    ...at('EDGEPLANE_PEER_LISTEN', config.peer?.listen),
    ...at('EDGEPLANE_SSH_LISTEN', config.sshListen),
    ...at('EDGEPLANE_HTTP01_LISTEN', config.certificates.http01Listen),
    ...at('EDGEPLANE_DNS_LISTEN', config.certificates.dnsListen),
  ];
}

/**
 * A bind failure of one of the configured listeners as a ListenError; anything else unchanged.
 * The listener is the one whose port (or, for port 0, host) the error names.
 */
export function explainListenError(error: unknown, config: Config): unknown {
  const e = error as NodeJS.ErrnoException & { address?: string; port?: number };
  const reason = REASONS[e?.code ?? ''];
  if (!reason || (e.syscall !== 'listen' && e.syscall !== 'bind')) return error;
  const listeners = configuredListeners(config);
  const found =
    listeners.find((l) => l.port === e.port && l.port !== 0 && (e.address === undefined || l.host === e.address)) ??
    listeners.find((l) => l.port === e.port && l.port !== 0) ??
    listeners.find((l) => l.port === 0 && l.host === e.address);
  const address = found ? hostPort(found.host, found.port) : hostPort(e.address ?? '?', e.port ?? 0);
  const change = found ? `; set ${found.setting} (or its flag) to another host:port` : '';
  return new ListenError(`cannot listen on ${address}${found ? ` (${found.setting})` : ''}: ${reason}${change}`, { cause: error });
}
