// The JSON of the agent protocol's typed streams, read with bounds. An agent's request has no
// length prefix and no end marker: the agent (ngrok-rust's RpcClient::rpc) writes the JSON and then
// waits for the reply with its write side still open, so the request ends where its top-level
// object closes. The reader below finds that point byte by byte (brackets and strings only; the
// JSON itself is checked by JSON.parse once complete), refusing anything past the bounds before it
// is buffered. Pure: no sockets, no timers; the session owns the stream and its timeout.

/** Why a message was refused; the session closes on any of them. */
export type AgentProtoProblem =
  | 'too_large'
  | 'too_deep'
  | 'too_many_items'
  | 'not_utf8'
  | 'invalid_json'
  | 'not_object'
  | 'truncated'
  | 'trailing_data'
  | 'missing_field'
  | 'wrong_type'
  | 'bad_value'
  | 'unknown_stream_type'
  | 'bad_length';

/** The only error this module throws: what was wrong, said for a log line. */
export class AgentProtoError extends Error {
  constructor(
    readonly problem: AgentProtoProblem,
    message: string,
  ) {
    super(message);
    this.name = 'AgentProtoError';
  }
}

export interface JsonLimits {
  /** Bytes of one message's JSON text. */
  maxBytes: number;
  /** Nesting of objects and arrays; the top-level object is depth 1. */
  maxDepth: number;
  /** Members of one object, known or not. */
  maxKeys: number;
  /** Items of one array. */
  maxItems: number;
}

// A Bind carries a traffic policy as a JSON string (up to 256 KiB as a document, more once
// escaped); the deepest message the agents send (Bind → Opts → Policy → rules → actions) is 7 deep;
// the widest objects (AuthExtra, HTTPEndpoint) have about 25 fields.
export const DEFAULT_LIMITS: JsonLimits = { maxBytes: 1024 * 1024, maxDepth: 16, maxKeys: 128, maxItems: 1024 };

const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

export const isWhitespace = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** What a reader gives once its object is complete: the value and the bytes that followed it. */
export interface JsonDone {
  value: unknown;
  rest: Buffer;
}

/**
 * Reads one top-level JSON object from chunks as they arrive. `push` returns the parsed value once
 * the object closes (with any bytes that came after it in the same chunk), or undefined while more
 * is needed; after the object, whitespace is ignored and anything else refused; `end` says the
 * stream ended (FIN) and refuses an unfinished object. Throws only AgentProtoError.
 */
export class JsonObjectReader {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private started = false;
  private inString = false;
  private escaped = false;
  // The open brackets, innermost last (bounded by maxDepth).
  private readonly open: number[] = [];
  private done = false;

  constructor(
    private readonly what: string,
    private readonly limits: JsonLimits = DEFAULT_LIMITS,
  ) {}

  push(chunk: Buffer): JsonDone | undefined {
    if (this.done) {
      // The Go agent's json.Encoder ends the message with a newline; anything else is a second message.
      if (chunk.every(isWhitespace)) return undefined;
      throw new AgentProtoError('trailing_data', `${this.what}: bytes after the complete message`);
    }
    // Only as far as the size allows: a huge chunk is refused without reading all of it.
    const allowed = Math.min(chunk.length, this.limits.maxBytes - this.size);
    for (let i = 0; i < allowed; i++) {
      const byte = chunk[i]!;
      if (!this.started) {
        if (isWhitespace(byte)) continue;
        if (byte !== OPEN_OBJECT) throw new AgentProtoError('not_object', `${this.what}: the message is not a JSON object`);
        this.started = true;
        this.open.push(byte);
        continue;
      }
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) this.inString = false;
        continue;
      }
      if (byte === QUOTE) this.inString = true;
      else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        if (this.open.length >= this.limits.maxDepth) {
          throw new AgentProtoError('too_deep', `${this.what}: nested deeper than ${this.limits.maxDepth} levels`);
        }
        this.open.push(byte);
      } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        const opener = this.open.pop();
        if (opener !== (byte === CLOSE_OBJECT ? OPEN_OBJECT : OPEN_ARRAY)) {
          throw new AgentProtoError('invalid_json', `${this.what}: '${String.fromCharCode(byte)}' closes nothing it opened`);
        }
        if (this.open.length === 0) return this.finish(chunk, i + 1);
      }
    }
    this.keep(chunk);
    return undefined;
  }

  /** The stream ended: fine once the object is complete, a refusal before. */
  end(): void {
    if (!this.done) throw new AgentProtoError('truncated', `${this.what}: the stream ended inside the message`);
  }

  private keep(part: Buffer): void {
    this.size += part.length;
    if (this.size > this.limits.maxBytes) {
      throw new AgentProtoError('too_large', `${this.what}: more than ${this.limits.maxBytes} bytes of JSON`);
    }
    if (part.length > 0) this.chunks.push(part);
  }

  private finish(chunk: Buffer, end: number): JsonDone {
    this.keep(chunk.subarray(0, end));
    this.done = true;
    const value = parseJsonObject(Buffer.concat(this.chunks, this.size), this.what, this.limits);
    this.chunks.length = 0;
    return { value, rest: chunk.subarray(end) };
  }
}

/**
 * A complete JSON object from bytes, within the limits: strict UTF-8 (serde_json refuses invalid
 * UTF-8 too), then JSON.parse, then the key and item counts. Throws only AgentProtoError.
 */
export function parseJsonObject(bytes: Uint8Array, what: string, limits: JsonLimits = DEFAULT_LIMITS): unknown {
  if (bytes.length > limits.maxBytes) throw new AgentProtoError('too_large', `${what}: more than ${limits.maxBytes} bytes of JSON`);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new AgentProtoError('not_utf8', `${what}: the message is not UTF-8`);
  }
  // The depth is checked before parsing: the scan is cheap, and JSON.parse is then never given
  // thousands of levels.
  checkDepth(bytes, what, limits.maxDepth);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AgentProtoError('invalid_json', `${what}: invalid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AgentProtoError('not_object', `${what}: the message is not a JSON object`);
  }
  checkCounts(value, what, limits, 1);
  return value;
}

function checkDepth(bytes: Uint8Array, what: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (const byte of bytes) {
    if (inString) {
      if (escaped) escaped = false;
      else if (byte === BACKSLASH) escaped = true;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > maxDepth) throw new AgentProtoError('too_deep', `${what}: nested deeper than ${maxDepth} levels`);
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) depth--;
  }
}

// Recursion is safe: the depth was bounded before parsing.
function checkCounts(value: unknown, what: string, limits: JsonLimits, depth: number): void {
  if (Array.isArray(value)) {
    if (value.length > limits.maxItems) {
      throw new AgentProtoError('too_many_items', `${what}: an array of ${value.length} items; at most ${limits.maxItems} are read`);
    }
    for (const item of value) checkCounts(item, what, limits, depth + 1);
  } else if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value);
    if (keys.length > limits.maxKeys) {
      throw new AgentProtoError('too_many_items', `${what}: an object of ${keys.length} members; at most ${limits.maxKeys} are read`);
    }
    for (const key of keys) checkCounts((value as Record<string, unknown>)[key], what, limits, depth + 1);
  }
}
