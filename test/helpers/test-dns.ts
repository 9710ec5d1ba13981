// The tests' stand-in for the Internet's DNS, as a recursive resolver presents it: end-to-end tests
// point both Pebble (`pebble -dnsserver 127.0.0.1:PORT`) and edgeplane (as its resolver) at it, so
// that what a test sets here is what both see. Records are set per name and type; a zone can be
// delegated to another server (edgeplane's authoritative one), which is then asked, as a recursive
// resolver does after following a delegation; and a zone can be made to time out.
//
// Resolution of (name, type), names case-insensitive:
// - under a blackholed zone: no answer at all;
// - under a delegated zone (the longest): the query, as it came, goes to that zone's server over
//   UDP, and its reply, as it came, goes back (SERVFAIL when none comes within 2 s);
// - else the name's records, or those of the nearest wildcard `*.<ancestor>` when it has none of its
//   own: records of the type → them; a CNAME (asked for another type) → the CNAME, and the same
//   resolution of its target appended (at most 8 hops; a target under a delegated zone is asked of
//   that zone's server); the name has other records, or AAAA was asked → NOERROR without answers
//   (Go's resolver asks A and AAAA both); else NXDOMAIN.
// It speaks DNS over UDP and TCP through the transport of src/lib/dns/server.ts. Answers have TTL 0,
// as tests change records between lookups.
import dgram from 'node:dgram';
import { isIP } from 'node:net';
import dnsPacket, { type Answer, type DecodedPacket, type Packet, type Question } from 'dns-packet';
import { isUnder } from '../../src/lib/dns/names.js';
import { parseResolverAddress } from '../../src/lib/dns/resolver.js';
import { decodeQuery, encodeReply, listenDns, normalizeDnsName, RCODE, recordAnswer, type DnsRecord, type DnsTransport } from '../../src/lib/dns/server.js';

export interface TestDns {
  /** '127.0.0.1:PORT' */
  address: string;
  port: number;
  /** Replaces the records of `name` and `type`; [] deletes them. */
  set(name: string, type: DnsRecord['type'], values: string[]): void;
  /** Queries for names at or under `zone` are forwarded to `upstream` ('host:port'), as a delegation to it would make a recursive resolver do. */
  delegate(zone: string, upstream: string): void;
  undelegate(zone: string): void;
  /** From now on, queries for names at or under zone get no answer at all (a timeout) until cleared. */
  blackhole(zone: string | undefined): void;
  close(): Promise<void>;
}

interface Upstream {
  host: string;
  port: number;
}

interface Resolution {
  rcode: number;
  answers: Answer[];
  authorities: Answer[];
}

const HOST = '127.0.0.1';
const TTL = 0;
const MAX_CNAME_HOPS = 8;
const FORWARD_TIMEOUT_MS = 2000;

/** Starts the stand-in on 127.0.0.1, UDP and TCP, on a free port. */
export async function startTestDns(): Promise<TestDns> {
  const zoneData = new TestZoneData();
  const server = await listenDns(HOST, 0, (message, transport) => answer(zoneData, message, transport));
  return {
    address: `${HOST}:${server.port}`,
    port: server.port,
    set: (name, type, values) => zoneData.set(name, type, values),
    delegate: (zone, upstream) => zoneData.delegate(zone, upstream),
    undelegate: (zone) => zoneData.undelegate(zone),
    blackhole: (zone) => zoneData.blackhole(zone),
    close: () => server.close(),
  };
}

/** What the tests have set: records by name and type, delegations, the blackholed zone. */
class TestZoneData {
  private readonly records = new Map<string, Map<string, DnsRecord[]>>();
  private readonly delegations = new Map<string, Upstream>();
  private blackholed: string | undefined;

  set(name: string, type: DnsRecord['type'], values: string[]): void {
    const bad = values.find((value) => (type === 'A' && isIP(value) !== 4) || (type === 'AAAA' && isIP(value) !== 6));
    if (bad !== undefined) throw new Error(`Not an ${type} record's address: ${bad}`);
    const owner = normalizeDnsName(name);
    const byType = this.records.get(owner) ?? new Map<string, DnsRecord[]>();
    if (values.length > 0)
      byType.set(
        type,
        values.map((data) => ({ type, data, ttl: TTL })),
      );
    else byType.delete(type);
    if (byType.size > 0) this.records.set(owner, byType);
    else this.records.delete(owner);
  }

  delegate(zone: string, upstream: string): void {
    const address = parseResolverAddress(upstream);
    if (!address) throw new Error(`Not an upstream address (IP:port): ${upstream}`);
    this.delegations.set(normalizeDnsName(zone), address);
  }

  undelegate(zone: string): void {
    this.delegations.delete(normalizeDnsName(zone));
  }

  blackhole(zone: string | undefined): void {
    this.blackholed = zone === undefined ? undefined : normalizeDnsName(zone);
  }

  isBlackholed(name: string): boolean {
    return this.blackholed !== undefined && isUnder(name, this.blackholed);
  }

  /** The server of the longest delegated zone `name` is at or under, if any. */
  delegationFor(name: string): Upstream | undefined {
    let longest: string | undefined;
    for (const zone of this.delegations.keys()) {
      if (isUnder(name, zone) && zone.length > (longest?.length ?? -1)) longest = zone;
    }
    return longest === undefined ? undefined : this.delegations.get(longest);
  }

  /** The records by type at `name`: its own, or else those of the nearest wildcard above it. */
  recordsAt(name: string): Map<string, DnsRecord[]> | undefined {
    const own = this.records.get(name);
    if (own) return own;
    for (let dot = name.indexOf('.'); dot !== -1; dot = name.indexOf('.', dot + 1)) {
      const wildcard = this.records.get(`*${name.slice(dot)}`);
      if (wildcard) return wildcard;
    }
    return undefined;
  }
}

async function answer(zoneData: TestZoneData, message: Buffer, transport: DnsTransport): Promise<Buffer | undefined> {
  const query = decodeQuery(message);
  const question = query.questions?.[0];
  if (!question) return encodeReply(query, reply(query, failure(RCODE.FORMERR)), transport);
  const name = normalizeDnsName(question.name);
  if (zoneData.isBlackholed(name)) return undefined;
  const upstream = zoneData.delegationFor(name);
  if (upstream) return (await exchange(message, query.id ?? 0, upstream)) ?? encodeReply(query, reply(query, failure(RCODE.SERVFAIL)), transport);
  const resolution = await resolve(zoneData, query, question);
  return resolution && encodeReply(query, reply(query, resolution), transport);
}

/** `question` answered from the records set, following CNAMEs; undefined when it is to go unanswered. */
async function resolve(zoneData: TestZoneData, query: DecodedPacket, question: Question): Promise<Resolution | undefined> {
  const answers: Answer[] = [];
  let owner = question.name;
  for (let hop = 0; hop <= MAX_CNAME_HOPS; hop++) {
    const here = zoneData.recordsAt(normalizeDnsName(owner));
    const found = here?.get(question.type) ?? [];
    if (found.length > 0) return { rcode: RCODE.NOERROR, answers: [...answers, ...found.map((record) => recordAnswer(owner, record))], authorities: [] };
    const alias = question.type === 'CNAME' ? undefined : here?.get('CNAME')?.[0];
    if (!alias) return { rcode: here || question.type === 'AAAA' ? RCODE.NOERROR : RCODE.NXDOMAIN, answers, authorities: [] };
    answers.push(recordAnswer(owner, alias));
    owner = alias.data;
    const target = normalizeDnsName(owner);
    if (zoneData.isBlackholed(target)) return undefined;
    const upstream = zoneData.delegationFor(target);
    if (upstream) return appendForwarded(answers, await askUpstream(query, { ...question, name: target }, upstream));
  }
  return failure(RCODE.SERVFAIL);
}

/** `question` asked of `upstream`, with the client's EDNS record (so the reply fits the client). */
async function askUpstream(query: DecodedPacket, question: Question, upstream: Upstream): Promise<DecodedPacket | undefined> {
  const id = Math.floor(Math.random() * 0x10000);
  const additionals = query.additionals?.filter((record) => record.type === 'OPT') ?? [];
  const response = await exchange(dnsPacket.encode({ type: 'query', id, questions: [question], additionals }), id, upstream);
  return response && dnsPacket.decode(response);
}

function appendForwarded(answers: Answer[], forwarded: DecodedPacket | undefined): Resolution {
  if (!forwarded) return failure(RCODE.SERVFAIL);
  const rcode = (forwarded.flags ?? 0) & 0xf;
  return { rcode, answers: [...answers, ...(forwarded.answers ?? [])], authorities: forwarded.authorities ?? [] };
}

/** Sends `message` to `upstream` over UDP; its reply (a response with `id`), or undefined after FORWARD_TIMEOUT_MS. */
async function exchange(message: Buffer, id: number, upstream: Upstream): Promise<Buffer | undefined> {
  const socket = dgram.createSocket(isIP(upstream.host) === 6 ? 'udp6' : 'udp4');
  return new Promise((resolve) => {
    let settled = false;
    const settle = (reply: Buffer | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      resolve(reply);
    };
    const timer = setTimeout(() => settle(undefined), FORWARD_TIMEOUT_MS);
    socket.on('error', () => settle(undefined));
    socket.on('message', (reply) => {
      if (isResponseTo(reply, id)) settle(reply);
    });
    socket.send(message, upstream.port, upstream.host);
  });
}

function isResponseTo(message: Buffer, id: number): boolean {
  try {
    const packet = dnsPacket.decode(message);
    return packet.type === 'response' && packet.id === id;
  } catch {
    return false;
  }
}

/** A recursive resolver's reply to `query` (RA set, not authoritative), RD copied. */
function reply(query: DecodedPacket, resolution: Resolution): Packet {
  return {
    type: 'response',
    id: query.id,
    flags: ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | dnsPacket.RECURSION_AVAILABLE | resolution.rcode,
    questions: query.questions,
    answers: resolution.answers,
    authorities: resolution.authorities,
  };
}

function failure(rcode: number): Resolution {
  return { rcode, answers: [], authorities: [] };
}
