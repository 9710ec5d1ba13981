// A small authoritative DNS server, over UDP and TCP on one address, for the zones delegated to
// edgeplane: it is how edgeplane answers ACME DNS-01 challenges (TXT records) itself. The records
// come from a lookup callback (the store) and the zones from another, as both change at runtime;
// this module only speaks DNS. dns-packet does the wire format, and any input, however broken,
// ends in an answer, a dropped datagram or a closed connection, never in a crash of the process.
//
// How a query (one question) is answered:
// - a name outside every zone, or a class other than IN: REFUSED, without AA;
// - a name inside (the longest zone it is at or under), always with AA:
//   - SOA at the zone apex: a synthesized SOA (this server is the only one for its zones);
//   - records of the asked type: NOERROR with them;
//   - else a CNAME at the name (and the question is for another type): the CNAME alone; the
//     resolver follows it (no chasing here: challenge CNAMEs point from other zones into ours);
//   - else NOERROR without answers if the name has records of another type, or is the apex, and
//     NXDOMAIN if it has none; the zone's SOA goes in the authority section either way (negative
//     caching). As lookups are of exact names, a name that exists only because names under it do
//     (an empty non-terminal) gets NXDOMAIN too, which is fine as long as record owners sit
//     directly where they are queried, as challenge records do.
// - lookup or zoneOf throwing: SERVFAIL, and a warning in the log.
// Building blocks (the transport, query decoding, reply encoding) are exported for the tests'
// stand-in for the Internet's DNS (test/helpers/test-dns.ts), which speaks the same wire.
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type OptAnswer, type Packet, type Question, type SoaAnswer } from 'dns-packet';
import { isUnder } from './names.js';

export interface DnsRecord {
  type: 'TXT' | 'A' | 'AAAA' | 'CNAME' | 'NS';
  data: string;
  ttl?: number;
}

export interface AuthoritativeDnsOptions {
  host: string;
  /** 0 picks a free port (the same one for UDP and TCP). */
  port: number;
  /** Records of one exact owner name (lower case, no trailing dot) and type; [] when none. */
  lookup: (name: string, type: DnsRecord['type']) => Promise<DnsRecord[]>;
  /** The nameserver name put in the SOA (mname), e.g. 'ns1.edgeplane.app'. */
  primaryNameserver: string;
  log?: { warn(obj: object, msg: string): void };
  /**
   * The zone (lower case, no trailing dot) `name` is at or under, if any; names in none get
   * REFUSED. Asked at each query: zones come and go, and may be too many to list (longestZone
   * finds one in a list).
   */
  zoneOf: (name: string) => Promise<string | undefined>;
}

export interface RunningDnsServer {
  host: string;
  port: number;
  close(): Promise<void>;
}

export type DnsTransport = 'udp' | 'tcp';

/**
 * Answers one DNS message: the reply's bytes, or undefined to send none. Throwing means the message
 * is malformed: the datagram is dropped, the TCP connection closed.
 */
export type DnsMessageHandler = (message: Buffer, transport: DnsTransport) => Promise<Buffer | undefined>;

/** Response codes (RFC 1035 4.1.1). */
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

const RECORD_TYPES: readonly DnsRecord['type'][] = ['TXT', 'A', 'AAAA', 'CNAME', 'NS'];
const DEFAULT_TTL = 60;
// How long resolvers may cache "no such record" (the SOA's TTL and minimum, RFC 2308): short, as a
// challenge's TXT record appears moments after a resolver may have looked for it in vain.
const NEGATIVE_TTL = 10;
const MAX_TXT_CHUNK_BYTES = 255;
const MIN_UDP_PAYLOAD = 512;
// The EDNS UDP payload size this side advertises and honours at most (the DNS flag day 2020 value).
const MAX_UDP_PAYLOAD = 1232;
const MAX_TCP_PAYLOAD = 65535;
// Queries are small; a client announcing a longer one is not speaking DNS.
const MAX_TCP_QUERY_BYTES = 4096;
const TCP_IDLE_TIMEOUT_MS = 10_000;
const MAX_TCP_CONNECTIONS = 256;
const PORT_ATTEMPTS = 5;

/** Starts answering for the zones of `options` on UDP and TCP; see the header comment for how. */
export async function startDnsServer(options: AuthoritativeDnsOptions): Promise<RunningDnsServer> {
  return listenDns(options.host, options.port, authoritativeHandler(options));
}

function authoritativeHandler(options: AuthoritativeDnsOptions): DnsMessageHandler {
  return async (message, transport) => {
    const query = decodeQuery(message);
    try {
      return encodeReply(query, await answerQuery(options, query), transport);
    } catch (err) {
      const question = query.questions?.[0];
      options.log?.warn(
        { name: question?.name, type: question?.type, error: err instanceof Error ? err.message : String(err) },
        'DNS query failed; answered SERVFAIL',
      );
      return encodeReply(query, reply(query, RCODE.SERVFAIL, 0), transport);
    }
  };
}

async function answerQuery(options: AuthoritativeDnsOptions, query: DecodedPacket): Promise<Packet> {
  if (opcodeOf(query) !== 0) return reply(query, RCODE.NOTIMP, 0);
  if (query.questions?.length !== 1) return reply(query, RCODE.FORMERR, 0);
  const question = query.questions[0];
  const name = normalizeDnsName(question.name);
  const zone = question.class === 'IN' ? await options.zoneOf(name) : undefined;
  if (zone === undefined) return reply(query, RCODE.REFUSED, 0);
  const found = await answerInZone(options, zone, question);
  return reply(query, found.rcode, dnsPacket.AUTHORITATIVE_ANSWER, found);
}

interface ZoneAnswer {
  rcode: number;
  answers: Answer[];
  authorities: Answer[];
}

async function answerInZone(options: AuthoritativeDnsOptions, zone: string, question: Question): Promise<ZoneAnswer> {
  const name = normalizeDnsName(question.name);
  const soa = soaRecord(zone, options.primaryNameserver);
  if (name === zone && question.type === 'SOA') return { rcode: RCODE.NOERROR, answers: [soa], authorities: [] };
  const asked = RECORD_TYPES.find((type) => type === question.type);
  const records = asked ? await options.lookup(name, asked) : [];
  if (records.length > 0) return positive(question.name, records);
  const aliases = asked === 'CNAME' ? [] : await options.lookup(name, 'CNAME');
  if (aliases.length > 0) return positive(question.name, aliases);
  const unchecked = RECORD_TYPES.filter((type) => type !== asked && type !== 'CNAME');
  const exists = name === zone || (await hasAnyRecord(options, name, unchecked));
  return { rcode: exists ? RCODE.NOERROR : RCODE.NXDOMAIN, answers: [], authorities: [soa] };
}

function positive(owner: string, records: DnsRecord[]): ZoneAnswer {
  return { rcode: RCODE.NOERROR, answers: records.map((record) => recordAnswer(owner, record)), authorities: [] };
}

async function hasAnyRecord(options: AuthoritativeDnsOptions, name: string, types: readonly DnsRecord['type'][]): Promise<boolean> {
  const found = await Promise.all(types.map((type) => options.lookup(name, type)));
  return found.some((records) => records.length > 0);
}

function soaRecord(zone: string, primaryNameserver: string): SoaAnswer {
  return {
    name: zone,
    type: 'SOA',
    ttl: NEGATIVE_TTL,
    data: {
      mname: primaryNameserver,
      rname: `hostmaster.${zone}`,
      // Records change at any moment and nothing transfers the zone, so the serial is just the time.
      serial: Math.floor(Date.now() / 1000),
      refresh: 3600,
      retry: 600,
      expire: 604800,
      minimum: NEGATIVE_TTL,
    },
  };
}

/** The longest of `zones` that `name` is at or under, if any. */
export function longestZone(name: string, zones: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const zone of zones) {
    if (isUnder(name, zone) && zone.length > (best?.length ?? -1)) best = zone;
  }
  return best;
}

/** A name as compared and stored: lower case, without the trailing dot. */
export function normalizeDnsName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** `record` as an answer owned by `owner`; TXT data is split into the 255-byte strings TXT is made of. */
export function recordAnswer(owner: string, record: DnsRecord): Answer {
  const ttl = record.ttl ?? DEFAULT_TTL;
  if (record.type === 'TXT') return { name: owner, type: 'TXT', ttl, data: txtStrings(record.data) };
  return { name: owner, type: record.type, ttl, data: record.data };
}

function txtStrings(text: string): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const strings = [bytes.subarray(0, MAX_TXT_CHUNK_BYTES)];
  for (let start = MAX_TXT_CHUNK_BYTES; start < bytes.length; start += MAX_TXT_CHUNK_BYTES) {
    strings.push(bytes.subarray(start, start + MAX_TXT_CHUNK_BYTES));
  }
  return strings;
}

/** `message` decoded; throws when it is no DNS message, or a response rather than a query. */
export function decodeQuery(message: Buffer): DecodedPacket {
  const packet = dnsPacket.decode(message);
  if (packet.type !== 'query') throw new Error('not a DNS query');
  return packet;
}

function opcodeOf(packet: DecodedPacket): number {
  return ((packet.flags ?? 0) >> 11) & 0xf;
}

/** A reply to `query`: its id, opcode and question echoed, RD copied, with `rcode` and `flags` set. */
function reply(query: DecodedPacket, rcode: number, flags: number, sections: Partial<ZoneAnswer> = {}): Packet {
  const copied = (query.flags ?? 0) & (dnsPacket.RECURSION_DESIRED | (0xf << 11));
  return {
    type: 'response',
    id: query.id,
    flags: copied | flags | rcode,
    questions: query.questions,
    answers: sections.answers ?? [],
    authorities: sections.authorities ?? [],
  };
}

/**
 * `response` (to `query`) encoded for `transport`. An EDNS query gets an OPT record back; a response
 * longer than the client takes over UDP (512 bytes, or its EDNS size up to 1232) goes out without
 * records and with TC set, so that the client asks again over TCP.
 */
export function encodeReply(query: DecodedPacket, response: Packet, transport: DnsTransport): Buffer {
  const clientOpt = query.additionals?.find((record): record is OptAnswer => record.type === 'OPT');
  const additionals: Answer[] = clientOpt
    ? [{ name: '.', type: 'OPT', udpPayloadSize: MAX_UDP_PAYLOAD, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }]
    : [];
  const encoded = dnsPacket.encode({ ...response, additionals });
  if (encoded.length <= payloadLimit(transport, clientOpt)) return encoded;
  return dnsPacket.encode({ ...response, flags: (response.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE, answers: [], authorities: [], additionals });
}

function payloadLimit(transport: DnsTransport, clientOpt: OptAnswer | undefined): number {
  if (transport === 'tcp') return MAX_TCP_PAYLOAD;
  if (!clientOpt) return MIN_UDP_PAYLOAD;
  return Math.min(Math.max(clientOpt.udpPayloadSize, MIN_UDP_PAYLOAD), MAX_UDP_PAYLOAD);
}

/**
 * Serves `handle` on UDP and TCP at `host:port`. With port 0, UDP binds first to get a free port and
 * TCP takes the same one; should TCP find it taken, both try again with another.
 */
export async function listenDns(host: string, port: number, handle: DnsMessageHandler): Promise<RunningDnsServer> {
  for (let attempt = 1; ; attempt++) {
    const udp = await bindUdp(host, port, handle);
    const boundPort = udp.address().port;
    try {
      const tcp = await listenTcp(host, boundPort, handle);
      return { host, port: boundPort, close: () => closeAll(udp, tcp) };
    } catch (err) {
      await closeUdp(udp);
      const retry = port === 0 && attempt < PORT_ATTEMPTS && (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!retry) throw err;
    }
  }
}

async function bindUdp(host: string, port: number, handle: DnsMessageHandler): Promise<dgram.Socket> {
  const socket = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  // Errors after binding concern single datagrams (an unreachable client, say): keep serving.
  socket.on('error', () => {});
  socket.on('message', (message, remote) => void answerDatagram(socket, handle, message, remote));
  return socket;
}

async function answerDatagram(socket: dgram.Socket, handle: DnsMessageHandler, message: Buffer, remote: dgram.RemoteInfo): Promise<void> {
  try {
    const answer = await handle(message, 'udp');
    if (answer) socket.send(answer, remote.port, remote.address, () => {});
  } catch {
    // Malformed, or the socket closed meanwhile: the datagram goes unanswered.
  }
}

interface TcpListener {
  server: net.Server;
  connections: Set<net.Socket>;
}

async function listenTcp(host: string, port: number, handle: DnsMessageHandler): Promise<TcpListener> {
  const connections = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
    serveTcpConnection(socket, handle);
  });
  server.maxConnections = MAX_TCP_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => {});
  return { server, connections };
}

/**
 * Answers the messages of one connection (each behind its 2-byte length, RFC 1035 4.2.2) one after
 * the other, reading no further while one is being answered. A malformed or oversized message, or
 * silence for TCP_IDLE_TIMEOUT_MS, closes the connection.
 */
function serveTcpConnection(socket: net.Socket, handle: DnsMessageHandler): void {
  let pending = Buffer.alloc(0);
  let busy = false;

  const takeMessage = (): Buffer | undefined => {
    if (pending.length < 2) return undefined;
    const length = pending.readUInt16BE(0);
    if (length > MAX_TCP_QUERY_BYTES) throw new Error('DNS message too long');
    if (pending.length < 2 + length) return undefined;
    const message = pending.subarray(2, 2 + length);
    pending = pending.subarray(2 + length);
    return message;
  };

  const answerPending = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    socket.pause();
    try {
      for (let message = takeMessage(); message; message = takeMessage()) {
        const answer = await handle(message, 'tcp');
        if (answer && !socket.destroyed) socket.write(withLength(answer));
      }
    } catch {
      socket.destroy();
    } finally {
      busy = false;
      if (!socket.destroyed) socket.resume();
    }
  };

  socket.setTimeout(TCP_IDLE_TIMEOUT_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    void answerPending();
  });
}

function withLength(message: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(message.length);
  return Buffer.concat([length, message]);
}

async function closeAll(udp: dgram.Socket, tcp: TcpListener): Promise<void> {
  for (const socket of tcp.connections) socket.destroy();
  await Promise.all([closeUdp(udp), new Promise<void>((resolve) => tcp.server.close(() => resolve()))]);
}

async function closeUdp(socket: dgram.Socket): Promise<void> {
  await new Promise<void>((resolve) => socket.close(() => resolve()));
}
