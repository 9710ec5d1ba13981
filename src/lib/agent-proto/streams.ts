// The start of typed streams: a u32 type, big-endian (muxado's typed.rs writes it with put_u32 and
// reads it with get_u32), then what that type carries. Pure: chunks in, values out.
import { AgentProtoError, DEFAULT_LIMITS, isWhitespace, JsonObjectReader, parseJsonObject, type JsonLimits } from './json.js';
import {
  decodeAgentRequest,
  decodeProxyHeaderJson,
  encodeProxyHeaderJson,
  isAgentRequestType,
  StreamType,
  type AgentRequest,
  type ProxyHeader,
} from './messages.js';

/** What a request stream gives once its start is read. */
export type RequestStreamStart =
  /** A heartbeat stream: no JSON; `rest` is the first of its 4-byte ids. */
  { kind: 'heartbeat'; rest: Buffer } | { kind: 'request'; request: AgentRequest };

/**
 * Reads a stream an agent opened: the u32 type, then the request's JSON, which ends where its
 * object closes (the agent sends no FIN before the reply; see json.ts). `push` returns the start
 * once complete, undefined while more is needed; `end` (FIN from the agent) refuses an unfinished
 * request. A type the agent may not open (3 to 6 and 9 are the server's, 8 and 10 are not
 * served) is refused at once. Throws only AgentProtoError.
 */
export class RequestStreamReader {
  private head = Buffer.alloc(0);
  private json: JsonObjectReader | undefined;
  private type: AgentRequest['type'] | undefined;
  private done = false;

  constructor(private readonly limits: JsonLimits = DEFAULT_LIMITS) {}

  push(chunk: Buffer): RequestStreamStart | undefined {
    if (this.done && this.type === undefined) throw new AgentProtoError('trailing_data', 'a heartbeat stream is not a request');
    if (this.json === undefined) {
      this.head = Buffer.concat([this.head, chunk]);
      if (this.head.length < 4) return undefined;
      const type = this.head.readUInt32BE(0);
      const rest = this.head.subarray(4);
      this.head = Buffer.alloc(0);
      if (type === StreamType.heartbeat) {
        this.done = true;
        return { kind: 'heartbeat', rest };
      }
      if (!isAgentRequestType(type)) throw new AgentProtoError('unknown_stream_type', `an agent may not open a stream of type ${type}`);
      this.type = type;
      this.json = new JsonObjectReader(requestName(type), this.limits);
      chunk = rest;
    }
    // After the request, only whitespace may come (the Go agent's newline): the agent waits for
    // the reply, and one stream carries one request.
    const complete = this.json.push(chunk);
    if (complete === undefined) return undefined;
    this.done = true;
    if (!complete.rest.every(isWhitespace)) throw new AgentProtoError('trailing_data', `${requestName(this.type!)}: bytes after the complete message`);
    return { kind: 'request', request: decodeAgentRequest(this.type!, complete.value) };
  }

  end(): void {
    if (this.done) return;
    if (this.json === undefined) throw new AgentProtoError('truncated', 'the stream ended before its type');
    this.json.end();
  }
}

function requestName(type: AgentRequest['type']): string {
  switch (type) {
    case StreamType.auth:
      return 'Auth';
    case StreamType.bind:
      return 'Bind';
    case StreamType.unbind:
      return 'Unbind';
    case StreamType.startTunnelWithLabel:
      return 'StartTunnelWithLabel';
  }
}

/** The u32 type that opens a stream the server starts (commands, proxied connections). */
export function encodeStreamType(type: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(type >>> 0);
  return b;
}

/**
 * The start of a proxied connection's stream, as ngrok-rust's ProxyHeader::read_from_stream reads
 * it after the type: u32 3, an i64 little-endian length, the ProxyHeader JSON; the connection's
 * bytes follow.
 */
export function encodeProxyStreamHeader(header: ProxyHeader): Buffer {
  const json = Buffer.from(encodeProxyHeaderJson(header), 'utf8');
  const out = Buffer.alloc(12 + json.length);
  out.writeUInt32BE(StreamType.proxy, 0);
  out.writeBigInt64LE(BigInt(json.length), 4);
  json.copy(out, 12);
  return out;
}

/** The inverse, for tests: the header and the bytes after it, or AgentProtoError. */
export function decodeProxyStreamHeader(bytes: Buffer, limits: JsonLimits = DEFAULT_LIMITS): { header: ProxyHeader; rest: Buffer } {
  if (bytes.length < 12) throw new AgentProtoError('truncated', 'ProxyHeader: fewer than 12 bytes');
  const type = bytes.readUInt32BE(0);
  if (type !== StreamType.proxy) throw new AgentProtoError('unknown_stream_type', `ProxyHeader: stream type ${type}, not 3`);
  const length = bytes.readBigInt64LE(4);
  if (length < 0n || length > BigInt(limits.maxBytes)) throw new AgentProtoError('bad_length', `ProxyHeader: length ${length}`);
  const end = 12 + Number(length);
  if (bytes.length < end) throw new AgentProtoError('truncated', 'ProxyHeader: fewer bytes than its length');
  const header = decodeProxyHeaderJson(parseJsonObject(bytes.subarray(12, end), 'ProxyHeader', limits));
  return { header, rest: bytes.subarray(end) };
}
