// The SNI server name of a TLS connection, read from its first bytes (the TLS records carrying the
// ClientHello, RFC 8446 §4.1.2 and RFC 6066 §3), chunk by chunk, without sockets or timers.
//
// Hand-written: the npm parsers do not fit. read-tls-client-hello (maintained) drives the socket
// itself (pauses it, reads and unshifts), reads a single record only and has no size bound of its
// own; `sni` is unmaintained and reads one record without checks. Here the listener keeps the
// socket, hands over each chunk, and gets one of four answers with every length checked.

/** A ClientHello larger than this (the handshake message) is refused; real ones are under 2 KiB. */
export const MAX_CLIENT_HELLO = 16 * 1024;
/** Records the ClientHello may be split over: a client fragments it into a few at most. */
export const MAX_RECORDS = 16;
/** The most bytes the reader holds: the records of a ClientHello of the largest size allowed. */
export const MAX_PEEK_BYTES = MAX_CLIENT_HELLO + 4 + MAX_RECORDS * 5;

const RECORD_HANDSHAKE = 22;
const HANDSHAKE_CLIENT_HELLO = 1;
const EXTENSION_SERVER_NAME = 0;
const NAME_TYPE_HOST_NAME = 0;
/** TLSPlaintext.length must not exceed 2^14 (RFC 8446 §5.1). */
const MAX_RECORD_LENGTH = 16 * 1024;

export type ClientHelloProblem = 'not_tls' | 'too_large' | 'malformed';

export type ClientHelloAnswer =
  | { kind: 'need_more' }
  /** The host_name of the server_name extension, in lower case without a trailing dot. */
  | { kind: 'server_name'; serverName: string }
  /** A well-formed ClientHello without a server_name extension (or without a host_name in it). */
  | { kind: 'no_sni' }
  | { kind: 'invalid'; problem: ClientHelloProblem; detail: string };

type Parse = ClientHelloAnswer | { kind: 'need'; bytes: number };

const invalid = (problem: ClientHelloProblem, detail: string): ClientHelloAnswer => ({ kind: 'invalid', problem, detail });

/**
 * Reads a connection's first bytes until it can answer. Feed every chunk to `push` until the answer
 * is not `need_more`; `bytes()` then holds everything pushed, to be replayed to whoever takes the
 * connection. It holds at most MAX_PEEK_BYTES (plus the last chunk's excess): a connection that
 * sends more without completing a ClientHello is refused.
 */
export class ClientHelloReader {
  private buffer = Buffer.alloc(512);
  private length = 0;
  /** The byte count at which parsing can make progress again. */
  private needed = 5;
  private answer: ClientHelloAnswer = { kind: 'need_more' };

  push(chunk: Buffer): ClientHelloAnswer {
    if (this.answer.kind !== 'need_more') return this.answer;
    this.append(chunk);
    if (this.length < this.needed) return this.answer;
    const parsed = parseClientHello(this.buffer.subarray(0, this.length));
    if (parsed.kind === 'need') {
      this.needed = parsed.bytes;
      if (parsed.bytes > MAX_PEEK_BYTES) this.answer = invalid('too_large', `the ClientHello's records exceed ${MAX_PEEK_BYTES} bytes`);
      return this.answer;
    }
    this.answer = parsed;
    return parsed;
  }

  /** Every byte pushed so far. */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  private append(chunk: Buffer): void {
    if (this.length + chunk.length > this.buffer.length) {
      // Doubling keeps the copying linear however small the chunks are.
      const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + chunk.length));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    chunk.copy(this.buffer, this.length);
    this.length += chunk.length;
  }
}

/** The answer for the bytes a connection began with (all of them so far): `need` says how many are needed to go on. */
function parseClientHello(data: Buffer): Parse {
  const fragments: Buffer[] = [];
  let handshakeBytes = 0;
  let offset = 0;
  for (let record = 0; ; record++) {
    if (data.length < offset + 5) return { kind: 'need', bytes: offset + 5 };
    if (data[offset] !== RECORD_HANDSHAKE)
      return invalid(record === 0 ? 'not_tls' : 'malformed', `record ${record} is of type ${data[offset]}, not a handshake`);
    // The record version is 0x0301 for TLS 1.0 to 1.3 alike; any 3.x is accepted, as servers do.
    if (data[offset + 1] !== 3) return invalid(record === 0 ? 'not_tls' : 'malformed', `record ${record} has version ${data[offset + 1]}.${data[offset + 2]}`);
    const recordLength = data.readUInt16BE(offset + 3);
    if (recordLength === 0 || recordLength > MAX_RECORD_LENGTH) return invalid('malformed', `record ${record} has length ${recordLength}`);
    if (record >= MAX_RECORDS) return invalid('too_large', `the ClientHello spans more than ${MAX_RECORDS} records`);
    const end = offset + 5 + recordLength;
    // The handshake header can be judged before its record is complete: refuse a huge one early.
    const available = data.subarray(offset + 5, Math.min(end, data.length));
    const header = handshakeBytes + available.length >= 4 ? Buffer.concat([...fragments, available]).subarray(0, 4) : undefined;
    if (header) {
      if (header[0] !== HANDSHAKE_CLIENT_HELLO) return invalid('malformed', `the first handshake message is of type ${header[0]}, not a ClientHello`);
      const messageLength = header.readUIntBE(1, 3);
      if (messageLength > MAX_CLIENT_HELLO) return invalid('too_large', `the ClientHello is ${messageLength} bytes; at most ${MAX_CLIENT_HELLO} are read`);
    }
    if (data.length < end) return { kind: 'need', bytes: end };
    fragments.push(available);
    handshakeBytes += available.length;
    offset = end;
    if (handshakeBytes < 4) continue;
    const handshake = Buffer.concat(fragments);
    const messageLength = handshake.readUIntBE(1, 3);
    if (handshakeBytes < 4 + messageLength) continue;
    return readClientHelloBody(handshake.subarray(4, 4 + messageLength));
  }
}

/** A bounds-checked reader over one buffer: each read throws Truncated past the end. */
class Truncated extends Error {}

class Cursor {
  constructor(
    private readonly data: Buffer,
    public offset = 0,
  ) {}
  get left(): number {
    return this.data.length - this.offset;
  }
  u8(): number {
    if (this.left < 1) throw new Truncated();
    return this.data[this.offset++]!;
  }
  u16(): number {
    if (this.left < 2) throw new Truncated();
    const value = this.data.readUInt16BE(this.offset);
    this.offset += 2;
    return value;
  }
  bytes(length: number): Buffer {
    if (this.left < length) throw new Truncated();
    const value = this.data.subarray(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }
}

function readClientHelloBody(body: Buffer): ClientHelloAnswer {
  try {
    const hello = new Cursor(body);
    hello.bytes(2 + 32); // legacy_version, random
    const sessionId = hello.u8();
    if (sessionId > 32) return invalid('malformed', `legacy_session_id is ${sessionId} bytes; at most 32`);
    hello.bytes(sessionId);
    const cipherSuites = hello.u16();
    if (cipherSuites < 2 || cipherSuites % 2 !== 0) return invalid('malformed', `cipher_suites has length ${cipherSuites}`);
    hello.bytes(cipherSuites);
    const compression = hello.u8();
    if (compression < 1) return invalid('malformed', 'legacy_compression_methods is empty');
    hello.bytes(compression);
    // Before TLS 1.2 the extensions may be absent altogether.
    if (hello.left === 0) return { kind: 'no_sni' };
    const extensions = new Cursor(hello.bytes(hello.u16()));
    if (hello.left !== 0) return invalid('malformed', `${hello.left} bytes follow the extensions`);
    let answer: ClientHelloAnswer = { kind: 'no_sni' };
    const seen = new Set<number>();
    while (extensions.left > 0) {
      const type = extensions.u16();
      const data = extensions.bytes(extensions.u16());
      if (seen.has(type)) return invalid('malformed', `extension ${type} appears twice`);
      seen.add(type);
      if (type === EXTENSION_SERVER_NAME) answer = readServerName(data);
    }
    return answer;
  } catch (error) {
    if (error instanceof Truncated) return invalid('malformed', 'a length runs past the end of the ClientHello');
    throw error;
  }
}

/** The server_name extension (RFC 6066 §3): the first host_name in its list. */
function readServerName(data: Buffer): ClientHelloAnswer {
  const extension = new Cursor(data);
  const list = new Cursor(extension.bytes(extension.u16()));
  if (extension.left !== 0) return invalid('malformed', 'bytes follow the server_name list');
  if (list.left === 0) return invalid('malformed', 'the server_name list is empty');
  let hostName: string | undefined;
  while (list.left > 0) {
    const nameType = list.u8();
    const name = list.bytes(list.u16());
    if (nameType === NAME_TYPE_HOST_NAME && hostName === undefined) {
      const text = name.toString('latin1').toLowerCase().replace(/\.$/, '');
      // ASCII letters, digits, hyphens, underscores and dots only: a DNS name in A-label form.
      if (text.length === 0 || text.length > 253 || !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(text))
        return invalid('malformed', 'the host_name is not a DNS name in ASCII');
      hostName = text;
    }
  }
  return hostName === undefined ? { kind: 'no_sni' } : { kind: 'server_name', serverName: hostName };
}
