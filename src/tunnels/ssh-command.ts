// What an `ssh -R` agent asks for: the command it runs on the server (`http`, `tls`, `tcp`,
// `labeled`, with their flags) and the address of its remote forward (`-R [name:]port:…`), made
// into the Bind or StartTunnelWithLabel an SDK agent would send, so that both are placed, checked
// and served by the same code (binds.ts). Flags are parsed by node:util's parseArgs.
import { parseArgs } from 'node:util';
import type { Bind, BindExtra, StartTunnelWithLabel } from '../lib/agent-proto/messages.js';

/** The address and port of the client's `tcpip-forward` request (`-R example.com:443:localhost:80`: `example.com`, 443). */
export interface RemoteForward {
  bindAddr: string;
  bindPort: number;
}

export type SshRequest = { kind: 'bind'; bind: Bind } | { kind: 'labeled'; request: StartTunnelWithLabel } | { kind: 'help' };

/** A command line that cannot be served: the message is printed to the user's terminal. */
export class SshCommandError extends Error {}

export const SSH_USAGE = `edgeplane: put a local port online with ssh -R.

  ssh -R 0:localhost:8080 HOST http                       a random https:// name
  ssh -R app.example.com:443:localhost:8080 HOST http     a reserved domain (or --domain app.example.com)
  ssh -R 0:localhost:8443 HOST tls --domain app.example.com
  ssh -R 0:localhost:22 HOST tcp                          a random TCP address
  ssh -R 1.tcp.example.com:10005:localhost:22 HOST tcp    a reserved address (or --remote-addr)
  ssh -R 0:localhost:8080 HOST labeled --label app=shop   a labeled tunnel, for edges

Flags: --domain NAME (http, tls), --remote-addr HOST:PORT (tcp), --label KEY=VALUE (labeled,
repeatable), --basic-auth USER:PASSWORD (http, repeatable), --pooling-enabled, --metadata TEXT.
`;

/** Addresses that name no domain: what `-R port:…` and `-R 0.0.0.0:port:…` send. */
const ANY_ADDRESS = new Set(['', 'localhost', '0.0.0.0', '*', '::', '127.0.0.1', '::1']);

/** The words of a command line, with '…' and "…" quoting (no escapes, no expansion: there is no shell here). */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of line.matchAll(pattern)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}

const MAX_COMMAND = 4096;

/** The request a command line and a remote forward make; SshCommandError says what is wrong. */
export function parseSshCommand(command: string, forward: RemoteForward): SshRequest {
  if (command.length > MAX_COMMAND) throw new SshCommandError(`the command is longer than ${MAX_COMMAND} characters`);
  const [verb, ...args] = splitWords(command);
  if (verb === undefined || verb === 'help' || verb === '--help' || verb === '-h') return { kind: 'help' };
  let parsed;
  try {
    parsed = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        domain: { type: 'string' },
        'remote-addr': { type: 'string' },
        label: { type: 'string', multiple: true },
        'basic-auth': { type: 'string', multiple: true },
        'pooling-enabled': { type: 'boolean' },
        metadata: { type: 'string' },
      },
    });
  } catch (err) {
    throw new SshCommandError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1 || (positionals.length === 1 && verb !== 'tcp'))
    throw new SshCommandError(`unexpected argument '${positionals.at(-1)!.slice(0, 80)}'`);
  const named = ANY_ADDRESS.has(forward.bindAddr.toLowerCase()) ? undefined : forward.bindAddr.toLowerCase();
  const extra: BindExtra = {
    token: '',
    ipPolicyRef: '',
    metadata: values.metadata ?? '',
    bindings: [],
    poolingEnabled: values['pooling-enabled'] ?? false,
    name: '',
    description: '',
  };
  // The local address of `-R` stays with the client: the server is told only the remote side.
  const common = { id: '', forwardsTo: 'ssh -R', forwardsProto: '', extra };
  const only = (allowed: readonly string[]) => {
    for (const flag of ['domain', 'remote-addr', 'label', 'basic-auth'] as const)
      if (values[flag] !== undefined && !allowed.includes(flag)) throw new SshCommandError(`--${flag} does not apply to ${verb}`);
  };
  switch (verb) {
    case 'http':
    case 'https': {
      only(['domain', 'basic-auth']);
      const credentials = (values['basic-auth'] ?? []).map((pair) => {
        const colon = pair.indexOf(':');
        if (colon <= 0) throw new SshCommandError(`--basic-auth takes USER:PASSWORD; got '${pair.slice(0, 80)}'`);
        return { username: pair.slice(0, colon), cleartextPassword: pair.slice(colon + 1), hashedPassword: Buffer.alloc(0) };
      });
      return {
        kind: 'bind',
        bind: {
          ...common,
          proto: 'https',
          opts: {
            domain: values.domain ?? named ?? '',
            hostname: '',
            auth: '',
            subdomain: '',
            hostHeaderRewrite: false,
            proxyProto: 0,
            ...(credentials.length > 0 && { basicAuth: { credentials } }),
          },
        },
      };
    }
    case 'tls':
      only(['domain']);
      return {
        kind: 'bind',
        bind: { ...common, proto: 'tls', opts: { domain: values.domain ?? named ?? '', hostname: '', subdomain: '', proxyProto: 0, mutualTlsAtAgent: false } },
      };
    case 'tcp': {
      only(['remote-addr']);
      const addr = values['remote-addr'] ?? positionals[0] ?? (named !== undefined ? `${named}:${forward.bindPort}` : '');
      return { kind: 'bind', bind: { ...common, proto: 'tcp', opts: { addr, proxyProto: 0 } } };
    }
    case 'labeled':
    case 'tunnel': {
      only(['label']);
      const labels: Record<string, string> = {};
      for (const label of values.label ?? []) {
        const eq = label.indexOf('=');
        if (eq <= 0) throw new SshCommandError(`--label takes KEY=VALUE; got '${label.slice(0, 80)}'`);
        labels[label.slice(0, eq)] = label.slice(eq + 1);
      }
      if (Object.keys(labels).length === 0) throw new SshCommandError('a labeled tunnel needs at least one --label KEY=VALUE');
      return { kind: 'labeled', request: { labels, forwardsTo: common.forwardsTo, forwardsProto: '', metadata: extra.metadata } };
    }
    default:
      throw new SshCommandError(`unknown command '${verb.slice(0, 40)}': the commands are http, tls, tcp and labeled`);
  }
}
