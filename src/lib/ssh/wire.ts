// The SSH wire encoding (RFC 4251 §5): uint32, uint64, string, mpint. Small enough to write by
// hand, and the certificate code needs exact control over every byte.
export class SshWriter {
  private readonly parts: Buffer[] = [];

  uint32(value: number): this {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(value >>> 0);
    this.parts.push(b);
    return this;
  }

  uint64(value: bigint): this {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(value);
    this.parts.push(b);
    return this;
  }

  string(value: Buffer | string): this {
    const data = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    this.uint32(data.length);
    this.parts.push(data);
    return this;
  }

  /** A non-negative integer given as big-endian magnitude bytes. */
  mpint(magnitude: Buffer): this {
    let start = 0;
    while (start < magnitude.length && magnitude[start] === 0) start++;
    let bytes = magnitude.subarray(start);
    if (bytes.length > 0 && (bytes[0]! & 0x80) !== 0) bytes = Buffer.concat([Buffer.from([0]), bytes]);
    return this.string(bytes);
  }

  raw(data: Buffer): this {
    this.parts.push(data);
    return this;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

export class SshReader {
  private offset = 0;

  constructor(private readonly data: Buffer) {}

  get done(): boolean {
    return this.offset === this.data.length;
  }

  /** How many bytes were read. */
  get position(): number {
    return this.offset;
  }

  uint64(): bigint {
    if (this.offset + 8 > this.data.length) throw new Error('truncated');
    const v = this.data.readBigUInt64BE(this.offset);
    this.offset += 8;
    return v;
  }

  uint32(): number {
    if (this.offset + 4 > this.data.length) throw new Error('truncated');
    const v = this.data.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  string(): Buffer {
    const length = this.uint32();
    if (this.offset + length > this.data.length) throw new Error('truncated');
    const v = this.data.subarray(this.offset, this.offset + length);
    this.offset += length;
    return v;
  }

  text(): string {
    return this.string().toString('utf8');
  }
}
