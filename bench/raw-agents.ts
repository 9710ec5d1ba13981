// Lightweight agents for the idle rows of the benchmark (j: idle streams, k: idle sessions), in a
// child process of the benchmark (forked with IPC). ngrok's SDK runs a runtime, a reconnecting
// session and its own buffers per session, too heavy to run a thousand of on the benchmark's
// machine; what edgeplane sees of an agent is its protocol, which edgeplane's own muxado client
// speaks (the hand-driven agent of test/tunnels/misbehaving-agents.test.ts): TLS to the agent
// listener, a muxado session, Auth with a credential's authtoken, a heartbeat of its own every
// 10 s (the crate's default) and the echo of the server's, as the SDK does, and for j a TCP bind
// whose Proxy streams it holds open until the public client hangs up (an idle connection).
import { once } from 'node:events';
import tls from 'node:tls';
import { StreamType } from '../src/lib/agent-proto/messages.js';
import { Session, type MuxadoStream } from '../src/lib/muxado/session.js';
import { acceptTyped, openTyped, startHeartbeat } from '../src/lib/muxado/typed.js';
import { serveCalls } from './child-rpc.js';

export type RawAgentCalls = {
  /**
   * Opens `count` sessions, `concurrency` at a time, each authenticated with the next of `tokens`
   * in turn (an account holds at most 100 sessions: one token per hundred).
   */
  connect(args: {
    count: number;
    tokens: string[];
    agentPort: number;
    caPem: string;
    heartbeatMs: number;
    concurrency: number;
  }): Promise<{ sessions: number; ms: number }>;
  /** The first `sessions` sessions each bind a TCP endpoint; their public ports. */
  bindTcp(args: { sessions: number }): Promise<{ ports: number[] }>;
  /** Proxy streams open now (opened by the server, not yet closed). */
  streams(): { open: number; total: number };
  /** Sessions still open. */
  sessions(): { open: number };
};

const TCP_BIND =
  '{"Id":"","Proto":"tcp","ForwardsTo":"bench:1","ForwardsProto":"","Opts":{"Addr":"","ProxyProto":0,"IPRestriction":null,"TrafficPolicy":null},' +
  '"Extra":{"Token":"","IPPolicyRef":"","Metadata":"","Bindings":[],"PoolingEnabled":false}}';

const auth = (token: string) =>
  JSON.stringify({
    Version: ['3', '2'],
    ClientId: '',
    Extra: { OS: 'linux', Arch: 'x86_64', AuthToken: token, Version: '0.0.1', Metadata: '', Cookie: '', ClientType: 'bench' },
  });

interface Agent {
  socket: tls.TLSSocket;
  session: Session;
}

const agents: Agent[] = [];
/** Proxy streams held, idle: the benchmark's public connections at the other end. */
const held = new Set<MuxadoStream>();
let totalStreams = 0;

/** Writes one request on a new typed stream and reads the reply to its end (the server sends FIN). */
async function rpc(session: Session, type: number, json: string): Promise<Record<string, unknown>> {
  const stream = openTyped(session, type);
  stream.on('error', () => {});
  stream.end(json);
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  await once(stream, 'end');
  return JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
}

async function connectOne(token: string, agentPort: number, caPem: string, heartbeatMs: number): Promise<Agent> {
  const socket = tls.connect({ host: '127.0.0.1', port: agentPort, ca: caPem, servername: 'localhost' });
  socket.on('error', () => {});
  await once(socket, 'secureConnect');
  socket.setNoDelay(true);
  const session = new Session(socket, { role: 'client' });
  session.on('error', () => {});
  acceptTyped(session, {
    onStream(type, stream) {
      if (type !== StreamType.proxy) return void stream.reset();
      // Held open, as an upstream holds an idle connection: what comes is read and dropped (the
      // header, then nothing), and when the public client hangs up (FIN) the agent does too.
      held.add(stream);
      totalStreams++;
      stream.once('close', () => held.delete(stream));
      stream.once('end', () => stream.end());
      stream.resume();
    },
  });
  // The agent's own heartbeat first, as the SDK opens it (its stream 3), then Auth.
  startHeartbeat(session, { intervalMs: heartbeatMs, timeoutMs: heartbeatMs * 3 });
  const authed = await rpc(session, StreamType.auth, auth(token));
  if (!/^ts_/.test(String(authed.ClientId))) throw new Error(`Auth refused: ${JSON.stringify(authed)}`);
  return { socket, session };
}

serveCalls<RawAgentCalls>(
  async () => ({ pid: process.pid }),
  {
    async connect({ count, tokens, agentPort, caPem, heartbeatMs, concurrency }) {
      const started = performance.now();
      let next = 0;
      const worker = async () => {
        while (next < count) {
          const n = next++;
          agents.push(await connectOne(tokens[Math.floor(n / 100) % tokens.length]!, agentPort, caPem, heartbeatMs));
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
      return { sessions: agents.length, ms: performance.now() - started };
    },
    async bindTcp({ sessions }) {
      if (sessions > agents.length) throw new Error(`${sessions} binds asked of ${agents.length} sessions`);
      const ports = await Promise.all(
        agents.slice(0, sessions).map(async ({ session }) => {
          const bound = await rpc(session, StreamType.bind, TCP_BIND);
          const url = String(bound.URL ?? '');
          if (!url.startsWith('tcp://')) throw new Error(`TCP bind refused: ${JSON.stringify(bound)}`);
          return Number(new URL(url.replace(/^tcp:/, 'http:')).port);
        }),
      );
      return { ports };
    },
    streams: () => ({ open: held.size, total: totalStreams }),
    sessions: () => ({ open: agents.filter((a) => !a.session.closed).length }),
  },
  async () => {
    for (const { session, socket } of agents) {
      session.goAway();
      socket.destroy();
    }
  },
);
