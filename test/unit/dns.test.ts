// The DNS pieces over real sockets on loopback: the authoritative server (src/lib/dns/server.ts)
// asked through the resolver (src/lib/dns/resolver.ts, over UDP) and with raw queries (UDP and
// TCP, to see the wire), and the tests' stand-in for the Internet's DNS (test/helpers/test-dns.ts)
// resolving CNAMEs, wildcards and delegations to the authoritative server.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import dnsPacket, { type Answer, type DecodedPacket, type Question } from 'dns-packet';
import { createResolver, DnsLookupError, parseResolverAddress } from '../../src/lib/dns/resolver.js';
import { longestZone, startDnsServer, type DnsRecord, type RunningDnsServer } from '../../src/lib/dns/server.js';
import { startTestDns, type TestDns } from '../helpers/test-dns.js';

const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];
// 300 bytes that are not all alike, so that chunks joined in the wrong order would show.
const LONG_TXT = Array.from({ length: 300 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
const MANY_LONG_TXT = ['1', '2', '3', '4', '5'].map((prefix) => prefix + LONG_TXT);

/** The records the authoritative server holds: owner → type → data. */
const RECORDS: Record<string, Partial<Record<DnsRecord['type'], string[]>>> = {
  'abc.acme.test': { TXT: ['token-abc'] },
  'long.acme.test': { TXT: [LONG_TXT] },
  'many.acme.test': { TXT: MANY_LONG_TXT },
  'alias.acme.test': { CNAME: ['abc.acme.test'] },
  'acme.test': { NS: ['ns1.edgeplane.test'] },
  'late.added.test': { TXT: ['added'] },
};
const FAILING_NAME = 'boom.acme.test';

function rcodeOf(packet: DecodedPacket): string {
  return RCODE_NAMES[(packet.flags ?? 0) & 0xf] ?? 'other';
}

/** The strings of a TXT answer (as dns-packet decodes them); [] for anything else. */
function txtStrings(answer: Answer | undefined): Buffer[] {
  return answer?.type === 'TXT' && Array.isArray(answer.data) ? answer.data.map((string) => Buffer.from(string)) : [];
}

function queryMessage(id: number, question: Question, edns = false): Buffer {
  const additionals = edns
    ? [{ name: '.', type: 'OPT' as const, udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }]
    : [];
  return dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [question], additionals });
}

/** Sends `message` over UDP to 127.0.0.1:port; the reply, decoded. */
async function udpExchange(port: number, message: Buffer): Promise<DecodedPacket> {
  const socket = dgram.createSocket('udp4');
  try {
    return await new Promise<DecodedPacket>((resolve, reject) => {
      socket.once('error', reject);
      socket.once('message', (reply) => resolve(dnsPacket.decode(reply)));
      socket.send(message, port, '127.0.0.1');
    });
  } finally {
    socket.close();
  }
}

/** Sends `messages` in one write over TCP, each behind its 2-byte length; the `messages.length` replies. */
async function tcpExchange(port: number, messages: Buffer[]): Promise<DecodedPacket[]> {
  const socket = net.connect(port, '127.0.0.1');
  try {
    return await new Promise<DecodedPacket[]>((resolve, reject) => {
      const replies: DecodedPacket[] = [];
      let pending = Buffer.alloc(0);
      socket.once('error', reject);
      socket.once('close', () => reject(new Error(`connection closed after ${replies.length} replies`)));
      socket.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
          replies.push(dnsPacket.decode(pending.subarray(2, 2 + pending.readUInt16BE(0))));
          pending = pending.subarray(2 + pending.readUInt16BE(0));
        }
        if (replies.length === messages.length) resolve(replies);
      });
      socket.write(Buffer.concat(messages.map((message) => Buffer.concat([Buffer.from([message.length >> 8, message.length & 0xff]), message]))));
    });
  } finally {
    socket.destroy();
  }
}

/**
 * Writes `bytes` over TCP; resolves when the server closes the connection, with what it sent back,
 * and rejects if it has not within a second (well before the server's idle timeout would).
 */
async function tcpSendExpectingClose(port: number, bytes: Buffer): Promise<Buffer> {
  const socket = net.connect(port, '127.0.0.1');
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  socket.on('error', () => {});
  socket.write(bytes);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the server kept the connection open')), 1000);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  } finally {
    socket.destroy();
  }
  return Buffer.concat(received);
}

describe('authoritative DNS server', () => {
  const zones = ['acme.test', 'sub.acme.test'];
  const warnings: { obj: object; msg: string }[] = [];
  let server: RunningDnsServer;
  let address: string;

  before(async () => {
    server = await startDnsServer({
      host: '127.0.0.1',
      port: 0,
      zoneOf: async (name) => longestZone(name, zones),
      lookup: async (name, type) => {
        if (name === FAILING_NAME) throw new Error('store unavailable');
        return (RECORDS[name]?.[type] ?? []).map((data) => ({ type, data }));
      },
      primaryNameserver: 'ns1.edgeplane.test',
      log: { warn: (obj, msg) => warnings.push({ obj, msg }) },
    });
    address = `127.0.0.1:${server.port}`;
  });
  after(() => server.close());

  it('answers TXT through the resolver, names case-insensitively', async () => {
    const dns = createResolver({ server: address });
    assert.deepEqual(await dns.txt('abc.acme.test'), ['token-abc']);
    assert.deepEqual(await dns.txt('ABC.Acme.TEST.'), ['token-abc']);
  });

  it('splits TXT data longer than 255 bytes into strings that join back to it', async () => {
    assert.deepEqual(await createResolver({ server: address }).txt('long.acme.test'), [LONG_TXT]);
    const reply = await udpExchange(server.port, queryMessage(7, { type: 'TXT', name: 'long.acme.test' }));
    assert.deepEqual(
      txtStrings(reply.answers?.[0]).map((string) => string.length),
      [255, 45],
    );
  });

  it('answers NXDOMAIN with the SOA for a name without records, which the resolver takes for none', async () => {
    assert.deepEqual(await createResolver({ server: address }).txt('missing.acme.test'), []);
    const reply = await udpExchange(server.port, queryMessage(11, { type: 'TXT', name: 'missing.acme.test' }));
    assert.equal(rcodeOf(reply), 'NXDOMAIN');
    assert.equal(reply.flag_aa, true);
    assert.equal(reply.answers?.length, 0);
    const soa = reply.authorities?.[0];
    assert.equal(soa?.type, 'SOA');
    assert.equal(soa?.name, 'acme.test');
    assert.equal(soa?.type === 'SOA' && soa.data.mname, 'ns1.edgeplane.test');
  });

  it('answers NOERROR without records for a type the name lacks, and for the apex', async () => {
    const other = await udpExchange(server.port, queryMessage(12, { type: 'AAAA', name: 'abc.acme.test' }));
    assert.equal(rcodeOf(other), 'NOERROR');
    assert.equal(other.answers?.length, 0);
    assert.equal(other.authorities?.[0]?.type, 'SOA');
    const apex = await udpExchange(server.port, queryMessage(13, { type: 'TXT', name: 'sub.acme.test' }));
    assert.equal(rcodeOf(apex), 'NOERROR');
    assert.equal(apex.authorities?.[0]?.name, 'sub.acme.test', 'the longest zone is the one answered for');
  });

  it('answers the SOA of a zone apex and the NS lookup gives', async () => {
    const reply = await udpExchange(server.port, queryMessage(14, { type: 'SOA', name: 'acme.test' }));
    assert.equal(rcodeOf(reply), 'NOERROR');
    assert.equal(reply.answers?.[0]?.type, 'SOA');
    assert.deepEqual(await createResolver({ server: address }).ns('acme.test'), ['ns1.edgeplane.test']);
  });

  it('answers the CNAME of a name asked for another type', async () => {
    const reply = await udpExchange(server.port, queryMessage(15, { type: 'TXT', name: 'alias.acme.test' }));
    assert.equal(rcodeOf(reply), 'NOERROR');
    assert.deepEqual(
      reply.answers?.map((a) => [a.type, 'data' in a && a.data]),
      [['CNAME', 'abc.acme.test']],
    );
    assert.deepEqual(await createResolver({ server: address }).cname('alias.acme.test'), ['abc.acme.test']);
  });

  it('refuses names outside its zones, without AA; the resolver throws EREFUSED', async () => {
    const reply = await udpExchange(server.port, queryMessage(16, { type: 'TXT', name: 'example.com' }));
    assert.equal(rcodeOf(reply), 'REFUSED');
    assert.equal(reply.flag_aa, false);
    await assert.rejects(createResolver({ server: address }).txt('notacme.test'), (err: unknown) => {
      assert.ok(err instanceof DnsLookupError);
      assert.equal(err.code, 'EREFUSED');
      assert.match(err.message, new RegExp(`TXT notacme\\.test .*${address}`));
      return true;
    });
  });

  it('follows the zones as they change', async () => {
    const dns = createResolver({ server: address });
    await assert.rejects(dns.txt('late.added.test'), { code: 'EREFUSED' });
    zones.push('added.test');
    try {
      assert.deepEqual(await dns.txt('late.added.test'), ['added']);
    } finally {
      zones.pop();
    }
  });

  it('answers SERVFAIL when the lookup throws, and logs a warning naming the name', async () => {
    await assert.rejects(createResolver({ server: address, tries: 1 }).txt(FAILING_NAME), (err: unknown) => {
      assert.ok(err instanceof DnsLookupError);
      assert.equal(err.code, 'ESERVFAIL');
      return true;
    });
    const warning = warnings.find((w) => (w.obj as { name?: string }).name === FAILING_NAME);
    assert.ok(warning, 'a warning was logged');
    assert.equal((warning.obj as { error?: string }).error, 'store unavailable');
  });

  it('echoes id, question and RD, and answers several queries on one TCP connection', async () => {
    const replies = await tcpExchange(server.port, [
      queryMessage(0x1234, { type: 'TXT', name: 'abc.acme.test' }),
      queryMessage(0x4321, { type: 'TXT', name: 'long.acme.test' }),
    ]);
    assert.deepEqual(
      replies.map((r) => [r.id, r.flag_qr, r.flag_aa, r.flag_rd, r.questions?.[0]?.name]),
      [
        [0x1234, true, true, true, 'abc.acme.test'],
        [0x4321, true, true, true, 'long.acme.test'],
      ],
    );
    const texts = replies.map((r) => Buffer.concat(txtStrings(r.answers?.[0])).toString());
    assert.deepEqual(texts, ['token-abc', LONG_TXT]);
  });

  it('truncates a UDP answer longer than the client takes, and answers it whole over TCP', async () => {
    const plain = await udpExchange(server.port, queryMessage(21, { type: 'TXT', name: 'many.acme.test' }));
    assert.equal(plain.flag_tc, true);
    assert.equal(plain.answers?.length, 0);
    const withEdns = await udpExchange(server.port, queryMessage(22, { type: 'TXT', name: 'many.acme.test' }, true));
    assert.equal(withEdns.flag_tc, true, '5 × 301 bytes do not fit in 1232 either');
    assert.equal(withEdns.additionals?.[0]?.type, 'OPT');
    const [whole] = await tcpExchange(server.port, [queryMessage(23, { type: 'TXT', name: 'many.acme.test' })]);
    assert.equal(whole.flag_tc, false);
    assert.equal(whole.answers?.length, MANY_LONG_TXT.length);
    // c-ares asks again over TCP when the UDP answer is truncated.
    assert.deepEqual((await createResolver({ server: address }).txt('many.acme.test')).sort(), MANY_LONG_TXT);
  });

  it('drops garbage datagrams and keeps answering', async () => {
    const socket = dgram.createSocket('udp4');
    for (const garbage of [Buffer.from('not dns at all'), Buffer.alloc(0), Buffer.from([0xff, 0xff, 0x01])]) {
      await new Promise<void>((resolve) => socket.send(garbage, server.port, '127.0.0.1', () => resolve()));
    }
    const answered = new Promise<boolean>((resolve) => {
      socket.once('message', () => resolve(true));
      setTimeout(() => resolve(false), 300);
    });
    assert.equal(await answered, false, 'no reply to garbage');
    socket.close();
    assert.deepEqual(await createResolver({ server: address }).txt('abc.acme.test'), ['token-abc']);
  });

  it('closes a TCP connection that sends garbage or an oversized message, and keeps answering', async () => {
    const garbage = await tcpSendExpectingClose(server.port, Buffer.from([0x00, 0x05, 0x01, 0x02, 0x03, 0x04, 0x05]));
    assert.equal(garbage.length, 0);
    const oversized = await tcpSendExpectingClose(server.port, Buffer.from([0xff, 0xff, 0x00]));
    assert.equal(oversized.length, 0);
    const [reply] = await tcpExchange(server.port, [queryMessage(31, { type: 'TXT', name: 'abc.acme.test' })]);
    assert.equal(rcodeOf(reply), 'NOERROR');
  });

  it('finds zones through zoneOf, asked at each query', async () => {
    const byName = await startDnsServer({
      host: '127.0.0.1',
      port: 0,
      zoneOf: async (name) => (name.endsWith('.acme.test') ? 'acme.test' : undefined),
      lookup: async (name, type) => (RECORDS[name]?.[type] ?? []).map((data) => ({ type, data })),
      primaryNameserver: 'ns1.edgeplane.test',
    });
    try {
      const dns = createResolver({ server: `127.0.0.1:${byName.port}` });
      assert.deepEqual(await dns.txt('abc.acme.test'), ['token-abc']);
      await assert.rejects(dns.txt('abc.elsewhere.test'), { code: 'EREFUSED' });
    } finally {
      await byName.close();
    }
  });
});

describe('parseResolverAddress', () => {
  it('takes IP addresses with or without a port', () => {
    assert.deepEqual(parseResolverAddress('127.0.0.1:8053'), { host: '127.0.0.1', port: 8053 });
    assert.deepEqual(parseResolverAddress('192.0.2.1'), { host: '192.0.2.1', port: 53 });
    assert.deepEqual(parseResolverAddress('[::1]:5353'), { host: '::1', port: 5353 });
    assert.deepEqual(parseResolverAddress('2001:db8::1'), { host: '2001:db8::1', port: 53 });
  });

  for (const bad of ['dns.example.com', 'dns.example.com:53', '127.0.0.1:0', '127.0.0.1:65536', '[127.0.0.1]:53', '::1:53x', '', 'fe80::1%eth0']) {
    it(`refuses ${JSON.stringify(bad)}`, () => assert.equal(parseResolverAddress(bad), undefined));
  }

  it('is what createResolver insists on', () => {
    assert.throws(() => createResolver({ server: 'dns.example.com' }), /Not a resolver address/);
  });
});

describe('test DNS (the stand-in for the Internet)', () => {
  let authoritative: RunningDnsServer;
  let testDns: TestDns;

  before(async () => {
    authoritative = await startDnsServer({
      host: '127.0.0.1',
      port: 0,
      zoneOf: async (name) => longestZone(name, ['acme.test']),
      lookup: async (name, type) => (RECORDS[name]?.[type] ?? []).map((data) => ({ type, data })),
      primaryNameserver: 'ns1.edgeplane.test',
    });
    testDns = await startTestDns();
  });
  after(() => Promise.all([authoritative.close(), testDns.close()]));

  const resolver = () => createResolver({ server: testDns.address });

  it('answers the records set, and forgets them when set to none', async () => {
    testDns.set('Set.X.test', 'TXT', ['one', 'two']);
    assert.deepEqual((await resolver().txt('set.x.test')).sort(), ['one', 'two']);
    testDns.set('set.x.test.', 'TXT', []);
    assert.deepEqual(await resolver().txt('set.x.test'), []);
  });

  it('chases CNAMEs, as a recursive resolver does', async () => {
    testDns.set('www.chase.test', 'CNAME', ['web.chase.test']);
    testDns.set('web.chase.test', 'CNAME', ['final.chase.test']);
    testDns.set('final.chase.test', 'TXT', ['at the end']);
    assert.deepEqual(await resolver().txt('www.chase.test'), ['at the end']);
    const reply = await udpExchange(testDns.port, queryMessage(41, { type: 'TXT', name: 'www.chase.test' }));
    assert.deepEqual(
      reply.answers?.map((a) => a.type),
      ['CNAME', 'CNAME', 'TXT'],
    );
    assert.deepEqual(await resolver().cname('www.chase.test'), ['web.chase.test'], 'a CNAME query gets the first link only');
  });

  it('answers a wildcard owner for itself and for names under it without records of their own', async () => {
    testDns.set('*.wild.test', 'CNAME', ['target.elsewhere.test']);
    testDns.set('own.wild.test', 'TXT', ['mine']);
    const dns = resolver();
    assert.deepEqual(await dns.cname('*.wild.test'), ['target.elsewhere.test']);
    assert.deepEqual(await dns.cname('anything.wild.test'), ['target.elsewhere.test']);
    assert.deepEqual(await dns.cname('two.labels.wild.test'), ['target.elsewhere.test']);
    assert.deepEqual(await dns.cname('own.wild.test'), []);
    assert.deepEqual(await dns.cname('wild.test'), [], 'the wildcard does not cover its parent');
  });

  it('answers NS records', async () => {
    testDns.set('delegated.test', 'NS', ['ns1.edgeplane.test', 'NS2.Edgeplane.Test.']);
    assert.deepEqual((await resolver().ns('delegated.test')).sort(), ['ns1.edgeplane.test', 'ns2.edgeplane.test']);
  });

  it('answers NXDOMAIN for unknown names, but NOERROR to AAAA', async () => {
    const a = await udpExchange(testDns.port, queryMessage(42, { type: 'A', name: 'unknown.test' }));
    assert.equal(rcodeOf(a), 'NXDOMAIN');
    assert.equal(a.flag_ra, true);
    const aaaa = await udpExchange(testDns.port, queryMessage(43, { type: 'AAAA', name: 'unknown.test' }));
    assert.equal(rcodeOf(aaaa), 'NOERROR');
    assert.equal(aaaa.answers?.length, 0);
  });

  it('forwards a delegated zone to its server, directly and at the end of a CNAME, over UDP and TCP', async () => {
    testDns.delegate('acme.test', `127.0.0.1:${authoritative.port}`);
    testDns.set('_acme-challenge.x.test', 'CNAME', ['abc.acme.test']);
    try {
      assert.deepEqual(await resolver().txt('abc.acme.test'), ['token-abc']);
      assert.deepEqual(await resolver().txt('_acme-challenge.x.test'), ['token-abc']);
      const [relayed] = await tcpExchange(testDns.port, [queryMessage(0x2222, { type: 'TXT', name: 'abc.acme.test' })]);
      assert.equal(relayed.id, 0x2222);
      assert.equal(relayed.flag_aa, true, "the authoritative server's reply, as it came");
    } finally {
      testDns.undelegate('acme.test');
    }
    assert.deepEqual(await resolver().txt('abc.acme.test'), [], 'undelegated, the name is unknown here');
  });

  it('answers SERVFAIL when a delegated zone’s server does not answer', async () => {
    const silent = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
    testDns.delegate('silent.test', `127.0.0.1:${silent.address().port}`);
    try {
      await assert.rejects(createResolver({ server: testDns.address, timeoutMs: 5000, tries: 1 }).txt('x.silent.test'), { code: 'ESERVFAIL' });
    } finally {
      testDns.undelegate('silent.test');
      silent.close();
    }
  });

  it('leaves a blackholed zone unanswered until cleared', async () => {
    testDns.set('x.dark.test', 'TXT', ['visible']);
    testDns.blackhole('dark.test');
    try {
      await assert.rejects(createResolver({ server: testDns.address, timeoutMs: 200, tries: 1 }).txt('x.dark.test'), (err: unknown) => {
        assert.ok(err instanceof DnsLookupError);
        assert.equal(err.code, 'ETIMEOUT');
        assert.match(err.message, /timed out/);
        return true;
      });
    } finally {
      testDns.blackhole(undefined);
    }
    assert.deepEqual(await resolver().txt('x.dark.test'), ['visible']);
  });
});
