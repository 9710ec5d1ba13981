// The SSH listener: OpenSSH's `ssh -R` as an agent, with nothing to install. A user registers a
// public key (`POST /ssh_credentials`), then runs `ssh -R 0:localhost:8080 HOST http`: the key
// authenticates the account, the remote forward says where the local service is, the command
// (ssh-command.ts) what to bind; the bind is placed, checked and served as an SDK agent's
// (binds.ts, holdTunnel), and each public connection is a `forwarded-tcpip` channel the server
// opens back to the client. The URL is printed on the command's channel; Ctrl-C (the connection
// closing) ends the session and its tunnel. The SSH protocol is ssh2's: none of it is written here.
import net, { type AddressInfo } from 'node:net';
import { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import ssh2 from 'ssh2';
import type { Connection, ServerChannel } from 'ssh2';
import { newId } from '../core/ids.js';
import type { Store } from '../db/store.js';
import { parseCertificate, verifySshSignature, type ParsedCertificate } from '../lib/ssh/certificate.js';
import { existingSshCertificateAuthorityIds, sshCertificateAuthorityForKey } from '../resources/ssh-certificate-authorities/ssh-certificate-authority.auth.js';
import { sshCredentialsForKey, usableSshCredentialIds } from '../resources/ssh-credentials/ssh-credential.auth.js';
import type { AgentCredential } from '../resources/credentials/credential.token.js';
import { holdTunnel, placeForSession, tunnelTarget, type HoldContext } from './agent-listener.js';
import { BindRefused, type BindSettings, type Placement } from './binds.js';
import type { RouteClaims } from './claims.js';
import type { AgentSessionInfo, AgentSessionRegistry } from './registry.js';
import { parseSshCommand, SSH_USAGE, SshCommandError, type RemoteForward, type SshRequest } from './ssh-command.js';
import type { TcpIngress } from './tcp-ingress.js';
import { checkCredentials, definedOnly, listenOn, stopsAccepting } from './listening.js';

export interface SshListenerTuning {
  /** From the TCP connection to a successful authentication; past it the connection is dropped. */
  authTimeoutMs?: number;
  /** From the authentication to the command (`http`, `tcp`…); `ssh -N` sends none and is dropped after it. */
  commandTimeoutMs?: number;
  /** Connections that have not authenticated yet, per process; more are closed at once. */
  maxUnauthenticated?: number;
  /** Live sessions per account (SDK agents' and ssh's together); the next is refused with a message. */
  maxSessionsPerAccount?: number;
  /** How often the live sessions' SSH credentials are checked again (gone or unusable: the sessions end). */
  credentialCheckMs?: number;
}

export const SSH_LISTENER_DEFAULTS: Required<SshListenerTuning> = {
  authTimeoutMs: 10_000,
  commandTimeoutMs: 10_000,
  maxUnauthenticated: 256,
  maxSessionsPerAccount: 100,
  credentialCheckMs: 10_000,
};

export interface SshListenerOptions extends SshListenerTuning {
  host: string;
  port: number;
  /** The host key's private PEM (ssh-host-key.ts). */
  hostKey: string;
  store: Store;
  log: Logger;
  registry: AgentSessionRegistry;
  binds: BindSettings;
  tcp: TcpIngress;
  claims: RouteClaims;
}

export interface SshListener {
  address: AddressInfo;
  stopAccepting(): void;
  close(): Promise<void>;
}

/** What an SSH session cannot do that an SDK agent can, as the API's session commands answer. */
const NO_COMMANDS = 'an ssh -R session runs no commands: end it with Ctrl-C, or delete its SSH credential';

export async function startSshListener(options: SshListenerOptions): Promise<SshListener> {
  const tuning = { ...SSH_LISTENER_DEFAULTS, ...definedOnly(options) } as Required<SshListenerTuning> & SshListenerOptions;
  const { log, registry } = options;
  // Our own TCP server hands each connection to ssh2 (injectSocket), so that the bound on
  // connections not signed in and the sign-in timeout count from the TCP accept: ssh2 tells of a
  // connection only once the client has sent its version line, and times nothing out before that.
  const unauthenticated = new Set<net.Socket>();
  const sockets = new Set<net.Socket>();
  /** What marks a connection signed in, by the client's address and port (ssh2 names it so). */
  const signedIn = new Map<string, () => void>();
  const ssh = new ssh2.Server({ hostKeys: [options.hostKey], ident: 'edgeplane' }, (client, info) => {
    serveSsh(client, info, { ...tuning, authenticated: signedIn.get(`${info.ip}:${info.port}`) ?? (() => {}) });
  });
  const server = net.createServer((socket) => {
    if (unauthenticated.size >= tuning.maxUnauthenticated) {
      log.warn({ limit: tuning.maxUnauthenticated, ip: socket.remoteAddress }, 'ssh connection refused: too many connections waiting to authenticate');
      socket.destroy();
      return;
    }
    const peer = `${socket.remoteAddress}:${socket.remotePort}`;
    unauthenticated.add(socket);
    sockets.add(socket);
    const timer = setTimeout(() => {
      if (unauthenticated.has(socket)) socket.destroy();
    }, tuning.authTimeoutMs);
    timer.unref();
    signedIn.set(peer, () => {
      unauthenticated.delete(socket);
      clearTimeout(timer);
    });
    socket.once('close', () => {
      clearTimeout(timer);
      unauthenticated.delete(socket);
      sockets.delete(socket);
      signedIn.delete(peer);
    });
    socket.on('error', () => {}); // ssh2's client reports, once
    // Small packets (a request's first bytes, an answer's last) must not wait for the previous one's ACK.
    socket.setNoDelay(true);
    ssh.injectSocket(socket);
  });
  await listenOn(server, options.host, options.port);
  server.on('error', (err: Error) => log.error({ err }, 'ssh listener error'));
  const stopAccepting = stopsAccepting(server);
  const stopChecking = checkCredentials({
    registry,
    everyMs: tuning.credentialCheckMs,
    log,
    ours: (id) => id.startsWith('sshcr_') || id.startsWith('sshca_'),
    usable: async (ids) => {
      const found = await Promise.all([
        usableSshCredentialIds(
          options.store,
          ids.filter((id) => id.startsWith('sshcr_')),
        ),
        existingSshCertificateAuthorityIds(
          options.store,
          ids.filter((id) => id.startsWith('sshca_')),
        ),
      ]);
      return new Set(found.flatMap((set) => [...set]));
    },
    reason: 'the SSH credential was deleted or can no longer be used',
  });
  return {
    address: server.address() as AddressInfo,
    stopAccepting,
    async close() {
      stopChecking();
      stopAccepting();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  };
}

type ServeContext = Required<SshListenerTuning> & SshListenerOptions & { authenticated: () => void };

/** One SSH connection: its key, its remote forward, its command, then the public connections it carries. */
function serveSsh(client: Connection, clientInfo: { ip: string; header: { versions: { software: string } } }, ctx: ServeContext): void {
  const { log, registry } = ctx;
  const ip = clientInfo.ip;
  let credential: AgentCredential | undefined;
  let info: AgentSessionInfo | undefined;
  let forward: (RemoteForward & { reply?: (port?: number) => void }) | undefined;
  let commandChannel: ServerChannel | undefined;
  let endedBecause: string | undefined;

  let commandTimer: NodeJS.Timeout | undefined;

  /** Says why on the command's channel when there is one, then hangs up. */
  const end = (reason: string, exitCode = 1): void => {
    if (reason !== '') endedBecause ??= reason;
    if (commandChannel?.writable) {
      if (reason !== '') commandChannel.stderr.write(`edgeplane: ${reason}\n`);
      commandChannel.exit(exitCode);
      // The client hangs up once the channel has closed (its 'close' below): ssh reports the exit
      // status it was sent only when the channel closes before the connection.
      commandChannel.close();
      return;
    }
    client.end();
  };

  client.on('error', (err: Error) => log.debug({ err: err.message, ip, session_id: info?.id }, 'ssh connection error'));
  client.on('close', () => {
    clearTimeout(commandTimer);
    forward?.reply?.();
    if (!info) return;
    registry.remove(info);
    log.info(
      {
        session_id: info.id,
        account_id: info.accountId,
        ip,
        seconds: Math.round((Date.now() - info.startedAt.getTime()) / 1000),
        reason: endedBecause ?? 'the client hung up',
      },
      'ssh agent session ended',
    );
  });

  client.on('authentication', (auth) => {
    if (auth.method !== 'publickey') return auth.reject(['publickey']);
    const { key, signature, blob, hashAlgo, username } = auth;
    if (key.algo.endsWith('-cert-v01@openssh.com')) {
      certificateSignIn(key.data, signature, blob)
        .then((signer) => {
          if (signer === 'ask') return auth.accept();
          if (!signer) return auth.reject(['publickey']);
          credential = signer;
          auth.accept();
        })
        .catch((err: unknown) => {
          log.error({ err, ip }, 'ssh authentication failed on the store');
          auth.reject(['publickey']);
        });
      return;
    }
    sshCredentialsForKey(ctx.store, key.data)
      .then((found) => {
        // A key registered in several accounts is ambiguous: the login name picks one (`sshcr_…@host`).
        const matches = username.startsWith('sshcr_') ? found.filter((c) => c.id === username) : found;
        if (matches.length !== 1) {
          if (matches.length > 1) log.info({ ip }, 'ssh login refused: the key is registered in several accounts; log in as the SSH credential id');
          return auth.reject(['publickey']);
        }
        // Without a signature the client only asks whether the key would do.
        if (!signature || !blob) return auth.accept();
        const parsed = ssh2.utils.parseKey(`${key.algo} ${key.data.toString('base64')}`);
        if (parsed instanceof Error || !parsed.verify(blob, signature, hashAlgo)) return auth.reject(['publickey']);
        credential = matches[0]!;
        auth.accept();
      })
      .catch((err: unknown) => {
        log.error({ err, ip }, 'ssh authentication failed on the store');
        auth.reject(['publickey']);
      });
  });

  /**
   * A user certificate signed by an account's SSH CA, valid now, with no critical option (none is
   * enforced here, so none is ignored): the CA's account, the CA as the session's credential.
   * 'ask': the certificate would do (the client asks before it signs).
   */
  async function certificateSignIn(certBlob: Buffer, signature: Buffer | undefined, signed: Buffer | undefined): Promise<AgentCredential | 'ask' | undefined> {
    let cert: ParsedCertificate;
    try {
      cert = parseCertificate(certBlob);
    } catch {
      return undefined;
    }
    const now = BigInt(Math.floor(Date.now() / 1000));
    if (cert.type !== 'user' || now < cert.validAfter || now >= cert.validBefore || cert.criticalOptions.length > 0) return undefined;
    const ca = await sshCertificateAuthorityForKey(ctx.store, cert.signatureKey);
    if (!ca || !verifySshSignature(cert.signatureKey, cert.signed, cert.signature)) return undefined;
    if (!signature || !signed) return 'ask';
    // ssh2 leaves a certificate's signature as the client sent it: its algorithm, then its bytes.
    if (!verifySshSignature(cert.subject, signed, signature)) return undefined;
    return { id: ca.id, accountId: ca.accountId, ownerId: '', acl: [] };
  }

  client.on('ready', () => {
    ctx.authenticated();
    const who = credential!;
    const others = registry.list(who.accountId).length;
    info = {
      id: newId('ts'),
      accountId: who.accountId,
      credentialId: who.id,
      os: '',
      version: clientInfo.header.versions.software,
      clientType: 'ssh',
      metadata: '',
      ip,
      startedAt: new Date(),
      cookie: '',
      transport: 'ssh',
      unsupported: { restart: NO_COMMANDS, stop: NO_COMMANDS, update: NO_COMMANDS },
    };
    if (others >= ctx.maxSessionsPerAccount) {
      log.info({ account_id: who.accountId, limit: ctx.maxSessionsPerAccount, ip }, 'ssh agent refused: too many sessions');
      info = undefined;
      // Said on the command's channel once it opens.
      endedBecause = `your account is limited to ${ctx.maxSessionsPerAccount} simultaneous agent sessions (ERR_NGROK_108)`;
    } else {
      registry.add(info, {
        end: (reason) => end(reason),
        open: () => {
          throw new Error(NO_COMMANDS);
        },
      });
      log.info({ session_id: info.id, account_id: info.accountId, credential_id: info.credentialId, ip, client: info.version }, 'ssh agent session started');
    }
    commandTimer = setTimeout(() => {
      if (!commandChannel) end('no command within the time allowed: run ssh -R … HOST http (or tcp, tls, labeled)');
    }, ctx.commandTimeoutMs);
    commandTimer.unref();
  });

  client.on('request', (accept, reject, name, request) => {
    if (name !== 'tcpip-forward' || forward) {
      // One remote forward a session; cancelling it ends the session's tunnel with the session.
      if (name === 'cancel-tcpip-forward') accept?.();
      else reject?.();
      return;
    }
    // The reply waits for the bind: for `-R 0:…` it carries the port the client will be told of.
    forward = { bindAddr: request.bindAddr, bindPort: request.bindPort, reply: (port) => accept?.(port) };
  });

  client.on('session', (acceptSession) => {
    const session = acceptSession();
    let terminal = false;
    session.on('pty', (accept) => {
      terminal = true;
      accept?.();
    });
    session.on('env', (accept) => accept?.());
    session.on('window-change', (accept) => accept?.());
    const run = (channel: ServerChannel, command: string) => {
      if (commandChannel) {
        channel.stderr.write('edgeplane: one command a connection\n');
        channel.exit(1);
        channel.end();
        return;
      }
      commandChannel = channel;
      clearTimeout(commandTimer);
      // The user's Ctrl-C (or Ctrl-D), with a terminal (`ssh -t`), arrives as a byte on the channel;
      // without one, Ctrl-C stops the ssh process itself, and the bytes of its input mean nothing.
      channel.on('data', (data: Buffer) => {
        if (terminal && (data.includes(3) || data.includes(4))) end('stopped', 0);
      });
      channel.on('close', () => client.end());
      runCommand(channel, command).catch((err: unknown) => {
        log.error({ err, session_id: info?.id }, 'ssh command failed');
        end('the command could not be run; try again');
      });
    };
    session.on('exec', (accept, _reject, request) => run(accept(), request.command));
    session.on('shell', (accept) => run(accept(), ''));
  });

  async function runCommand(channel: ServerChannel, command: string): Promise<void> {
    if (!info) return end(endedBecause ?? 'not authenticated');
    let request: SshRequest;
    try {
      request = parseSshCommand(command, forward ?? { bindAddr: '', bindPort: 0 });
    } catch (err) {
      if (!(err instanceof SshCommandError)) throw err;
      return end(`${err.message}\n\n${SSH_USAGE}`);
    }
    if (request.kind === 'help') {
      channel.write(SSH_USAGE);
      return end('', 0);
    }
    if (!forward) return end('no remote forward: run ssh -R 0:localhost:PORT HOST http (the -R says where your service is)');
    const session = info;
    const gone = () => registry.infoOf(session.id) !== session;
    let placement: Placement;
    try {
      placement = await placeForSession(request, session, ctx);
      if (gone()) return;
      const boundPort = placement.tcpPort ?? (forward.bindPort === 0 ? publicPort(placement, ctx.binds) : forward.bindPort);
      const { bindAddr } = forward;
      const target = tunnelTarget(placement, (clientAddr) => registry.proxyStream(forwardedChannel(client, bindAddr, boundPort, clientAddr)));
      await holdTunnel(placement, target, gone, ctx satisfies HoldContext);
      forward.reply?.(forward.bindPort === 0 ? boundPort : undefined);
      forward.reply = undefined;
    } catch (err) {
      if (!(err instanceof BindRefused)) {
        log.error({ err, session_id: session.id }, 'ssh bind failed');
        return end('the tunnel could not be started; try again');
      }
      log.info({ session_id: session.id, account_id: session.accountId, code: err.errorCode, reason: err.message }, 'ssh bind refused');
      return end(`${err.message} (${err.errorCode})`);
    }
    const url = placement.live.endpoint?.publicUrl;
    const labels = placement.live.labels;
    channel.write(
      url !== undefined
        ? `Forwarding ${url}\n`
        : `Labeled tunnel online: ${Object.entries(labels ?? {})
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')}\n`,
    );
    log.info({ session_id: session.id, account_id: session.accountId, tunnel_id: placement.live.id, url, labels }, 'ssh tunnel started');
  }
}

/** The port a `-R 0:…` client is told of: the public port of its URL. */
function publicPort(placement: Placement, binds: BindSettings): number {
  const proto = placement.live.endpoint?.proto;
  if (proto === 'http') return binds.httpPort ?? 80;
  return binds.httpsPort ?? 443;
}

/**
 * One public connection as a `forwarded-tcpip` channel to the client, which connects it to the
 * forward's local address. Returned at once (TunnelTarget.connect is synchronous): what is written
 * before the channel opens waits, and a refusal destroys the stream.
 */
function forwardedChannel(client: Connection, bindAddr: string, bindPort: number, clientAddr: string): Duplex {
  const colon = clientAddr.lastIndexOf(':');
  const remoteIp = colon > 0 ? clientAddr.slice(0, colon).replace(/^\[|\]$/g, '') : clientAddr;
  const remotePort = colon > 0 ? Number(clientAddr.slice(colon + 1)) || 0 : 0;
  const stream = new ChannelStream();
  client.forwardOut(bindAddr, bindPort, remoteIp, remotePort, (err, channel) => {
    if (err) stream.destroy(err);
    else stream.attach(channel);
  });
  return stream;
}

/**
 * A channel that may not be open yet, as a stream with TCP's half-close: the end of what the
 * public client sends is the channel's EOF, and its end what the client's local side sent. Written
 * by hand, not with duplexify: that ends a stream by ending it, and ssh2 closes a server's channel
 * whole when its writing ends, which would cut the answer of a client that half-closed.
 */
class ChannelStream extends Duplex {
  private channel: ServerChannel | undefined;
  /** A write (or the end) that waits for the channel to open. */
  private waiting: (() => void) | undefined;

  constructor() {
    super({ allowHalfOpen: true });
  }

  attach(channel: ServerChannel): void {
    if (this.destroyed) return void channel.close();
    this.channel = channel;
    channel.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) channel.pause();
    });
    channel.on('end', () => this.push(null));
    // The client closed it: its local side is gone both ways.
    channel.on('close', () => {
      this.push(null);
      if (!this.writableFinished) this.destroy();
    });
    channel.on('error', (err: Error) => this.destroy(err));
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const channel = this.channel;
    if (!channel) {
      this.waiting = () => this._write(chunk, _encoding, done);
      return;
    }
    if (channel.write(chunk)) done();
    else channel.once('drain', () => done());
  }

  override _final(done: (error?: Error | null) => void): void {
    if (!this.channel) {
      this.waiting = () => this._final(done);
      return;
    }
    this.channel.eof();
    done();
  }

  override _read(): void {
    this.channel?.resume();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.channel?.close();
    done(error);
  }
}
