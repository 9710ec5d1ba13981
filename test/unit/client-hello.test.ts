// The ClientHello reader on real ClientHellos (node's tls.connect, openssl s_client) fed in every
// split, and on truncated, malformed and oversized input.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import tls from 'node:tls';
import { before, describe, it } from 'node:test';
import { ClientHelloReader, MAX_CLIENT_HELLO, type ClientHelloAnswer } from '../../src/lib/tls/client-hello.js';

/** The first TLS record a client sends (its ClientHello), captured on a real socket. */
async function capture(connect: (port: number) => () => void): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  try {
    const record = new Promise<Buffer>((resolve, reject) => {
      server.once('connection', (socket) => {
        let data = Buffer.alloc(0);
        socket.on('data', (chunk: Buffer) => {
          data = Buffer.concat([data, chunk]);
          if (data.length >= 5 && data.length >= 5 + data.readUInt16BE(3)) {
            resolve(data.subarray(0, 5 + data.readUInt16BE(3)));
            socket.destroy();
          }
        });
        socket.on('error', reject);
      });
    });
    const stop = connect(port);
    try {
      return await record;
    } finally {
      stop();
    }
  } finally {
    server.close();
  }
}

function nodeHello(servername?: string, options: tls.ConnectionOptions = {}): Promise<Buffer> {
  return capture((port) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ...(servername !== undefined && { servername }), ...options });
    socket.on('error', () => {});
    return () => socket.destroy();
  });
}

function opensslHello(args: string[]): Promise<Buffer> {
  return capture((port) => {
    const child = spawn('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...args], { stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', () => {});
    return () => child.kill();
  });
}

function readAll(chunks: Buffer[]): ClientHelloAnswer[] {
  const reader = new ClientHelloReader();
  return chunks.map((c) => reader.push(c));
}

/** Every way to split `bytes` in two gives the same final answer, and `need_more` before the last byte. */
function assertEverySplit(bytes: Buffer, expected: ClientHelloAnswer): void {
  for (let at = 0; at <= bytes.length; at++) {
    const answers = readAll([bytes.subarray(0, at), bytes.subarray(at)]);
    if (at < bytes.length) assert.deepEqual(answers[0], { kind: 'need_more' }, `split at ${at}`);
    assert.deepEqual(answers[1], expected, `split at ${at}`);
  }
  const oneByOne = readAll([...bytes].map((b) => Buffer.from([b])));
  assert.ok(oneByOne.slice(0, -1).every((a) => a.kind === 'need_more'));
  assert.deepEqual(oneByOne.at(-1), expected);
}

/** A ClientHello record built by hand: the given extensions (type, data) after fixed fields. */
function build(extensions: [number, Buffer][] | undefined, options: { sessionId?: number } = {}): Buffer {
  const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
  const sessionId = options.sessionId ?? 32;
  const parts = [
    Buffer.from([3, 3]),
    Buffer.alloc(32, 7),
    Buffer.from([sessionId]),
    Buffer.alloc(Math.min(sessionId, 40), 1),
    u16(2),
    u16(0x1301),
    Buffer.from([1, 0]),
  ];
  if (extensions) {
    const ext = Buffer.concat(extensions.map(([type, data]) => Buffer.concat([u16(type), u16(data.length), data])));
    parts.push(u16(ext.length), ext);
  }
  const body = Buffer.concat(parts);
  const message = Buffer.concat([Buffer.from([1, body.length >> 16, (body.length >> 8) & 0xff, body.length & 0xff]), body]);
  return Buffer.concat([Buffer.from([22, 3, 1]), u16(message.length), message]);
}

function sni(...names: [number, string][]): Buffer {
  const list = Buffer.concat(
    names.map(([type, name]) => Buffer.concat([Buffer.from([type, name.length >> 8, name.length & 0xff]), Buffer.from(name, 'latin1')])),
  );
  return Buffer.concat([Buffer.from([list.length >> 8, list.length & 0xff]), list]);
}

/** The record's ClientHello split into records of `size` bytes of handshake each. */
function fragment(record: Buffer, size: number): Buffer {
  const handshake = record.subarray(5);
  const records: Buffer[] = [];
  for (let i = 0; i < handshake.length; i += size) {
    const piece = handshake.subarray(i, i + size);
    records.push(Buffer.from([22, 3, 1, piece.length >> 8, piece.length & 0xff]), piece);
  }
  return Buffer.concat(records);
}

const found = (serverName: string): ClientHelloAnswer => ({ kind: 'server_name', serverName });

describe('ClientHello reader', () => {
  let nodeWithName: Buffer;
  before(async () => {
    nodeWithName = await nodeHello('App.Example.COM');
  });

  it("finds the server name of node's ClientHello, in lower case, however it is split", () => {
    assertEverySplit(nodeWithName, found('app.example.com'));
    // What follows the ClientHello (nothing here, but a client may pipeline) does not matter.
    assert.deepEqual(readAll([Buffer.concat([nodeWithName, Buffer.from('more')])])[0], found('app.example.com'));
  });

  it('answers no_sni for a ClientHello without a server name (node to an IP address)', async () => {
    assertEverySplit(await nodeHello(undefined), { kind: 'no_sni' });
  });

  it("finds the server name in openssl s_client's ClientHellos, TLS 1.3 and 1.2", async () => {
    assertEverySplit(await opensslHello(['-servername', 'tls13.example.net', '-tls1_3']), found('tls13.example.net'));
    assertEverySplit(await opensslHello(['-servername', 'tls12.example.net', '-tls1_2']), found('tls12.example.net'));
    assertEverySplit(await opensslHello(['-noservername']), { kind: 'no_sni' });
  });

  it('reads a ClientHello fragmented over several records', () => {
    // Records small enough to spread it over 15 (Node 22 and later send a larger ClientHello than
    // Node 20, with a post-quantum key share: a fixed record size would exceed the 16 allowed).
    const size = Math.ceil(nodeWithName.length / 15);
    assertEverySplit(fragment(nodeWithName, size), found('app.example.com'));
    assert.deepEqual(readAll([fragment(nodeWithName, Math.ceil(nodeWithName.length / 16))])[0], found('app.example.com'));
  });

  it('keeps answering need_more for every truncation, and holds every byte pushed', () => {
    const reader = new ClientHelloReader();
    for (let i = 0; i < nodeWithName.length - 1; i++) assert.equal(reader.push(nodeWithName.subarray(i, i + 1)).kind, 'need_more');
    assert.deepEqual(reader.bytes(), nodeWithName.subarray(0, -1));
    assert.deepEqual(reader.push(nodeWithName.subarray(-1)), found('app.example.com'));
    assert.deepEqual(reader.bytes(), nodeWithName);
  });

  it('refuses what is not TLS at once', () => {
    for (const text of ['GET / HTTP/1.1\r\nHost: a\r\n\r\n', 'SSH-2.0-OpenSSH_9.6\r\n', '\x16\x02\x00\x00\x10']) {
      const answer = readAll([Buffer.from(text, 'latin1')])[0]!;
      assert.equal(answer.kind, 'invalid', text);
      assert.equal(answer.kind === 'invalid' && answer.problem, 'not_tls', text);
    }
    // SSLv2-style hello
    assert.equal(readAll([Buffer.from([0x80, 0x2e, 0x01, 0x03, 0x01])])[0]!.kind, 'invalid');
  });

  it('refuses a ClientHello over 16 KiB from its header, before reading it', () => {
    const length = MAX_CLIENT_HELLO + 1;
    const header = Buffer.from([22, 3, 1, 0x40, 0x00, 1, length >> 16, (length >> 8) & 0xff, length & 0xff]);
    const answer = readAll([header])[0]!;
    assert.equal(answer.kind === 'invalid' && answer.problem, 'too_large');
    // Exactly 16 KiB is read (and then judged on its content).
    const big = build([[0xffff, Buffer.alloc(MAX_CLIENT_HELLO - 80)]]);
    assert.ok(big.length - 9 <= MAX_CLIENT_HELLO);
    assert.equal(readAll([fragment(big, 16_384)])[0]!.kind, 'no_sni');
  });

  it('refuses a ClientHello spread over too many records, and empty or oversized records', () => {
    const tooMany = readAll([fragment(nodeWithName, 1)])[0]!;
    assert.equal(tooMany.kind === 'invalid' && tooMany.problem, 'too_large');
    assert.equal(readAll([Buffer.from([22, 3, 1, 0, 0])])[0]!.kind, 'invalid');
    assert.equal(readAll([Buffer.from([22, 3, 1, 0x40, 0x01])])[0]!.kind, 'invalid');
    // Another handshake message first (a ServerHello).
    const serverHello = Buffer.from(nodeWithName);
    serverHello[5] = 2;
    assert.equal(readAll([serverHello])[0]!.kind, 'invalid');
  });

  it('refuses malformed lengths and names, and reads built ClientHellos right', () => {
    assertEverySplit(build([[0, sni([0, 'a.example.org'])]]), found('a.example.org'));
    assert.deepEqual(readAll([build([[0, sni([0, 'trailing.example.org.'])]])])[0], found('trailing.example.org'));
    assert.deepEqual(readAll([build(undefined)])[0], { kind: 'no_sni' }, 'no extensions at all (before TLS 1.2)');
    assert.deepEqual(readAll([build([[0, sni([1, 'other-type'])]])])[0], { kind: 'no_sni' });
    assert.deepEqual(readAll([build([[0, sni([1, 'x'], [0, 'second.example.org'])]])])[0], found('second.example.org'));
    const malformed = [
      build([[0, sni([0, 'bad name.example.org'])]]),
      build([[0, sni([0, 'caf\xe9.example.org'])]]),
      build([[0, sni([0, ''])]]),
      build([[0, Buffer.from([0, 0])]]), // empty list
      build([[0, Buffer.from([0, 9, 0, 0, 3, 97])]]), // list length past the end
      build([
        [0, sni([0, 'a.example.org'])],
        [0, sni([0, 'b.example.org'])],
      ]), // the extension twice
      build([[10, Buffer.alloc(4)]], { sessionId: 40 }), // session id over 32
    ];
    for (const [i, bytes] of malformed.entries()) {
      const answer = readAll([bytes])[0]!;
      assert.equal(answer.kind === 'invalid' && answer.problem, 'malformed', `case ${i}: ${JSON.stringify(answer)}`);
    }
    // An extension whose length runs past the end of the message.
    const cut = build([[0, sni([0, 'a.example.org'])]]);
    cut.writeUInt16BE(cut.readUInt16BE(cut.length - 20) + 100, cut.length - 20);
    assert.equal(readAll([cut])[0]!.kind, 'invalid');
  });
});
