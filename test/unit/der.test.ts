// The DER element count that bounds what @peculiar/x509 is given: what it counts (inside
// constructed elements and inside strings that hold DER, as extension values do), that it stops
// early past its maximum, and that data that is not DER counts what could be read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { derElementCount } from '../../src/lib/crypto/der.js';

const bytes = (...values: number[]) => Uint8Array.from(values);

describe('derElementCount', () => {
  it('counts the elements of constructed elements and of strings that hold DER', () => {
    // SEQUENCE { INTEGER 1, OCTET STRING { SEQUENCE { BOOLEAN true } } }
    assert.equal(derElementCount(bytes(0x30, 0x0a, 0x02, 0x01, 0x01, 0x04, 0x05, 0x30, 0x03, 0x01, 0x01, 0xff), 100), 5);
    // An OCTET STRING of plain bytes is one element.
    assert.equal(derElementCount(bytes(0x04, 0x03, 0x61, 0x62, 0x63), 100), 1);
    // Long-form lengths.
    const long = Uint8Array.from([0x30, 0x81, 0x84, ...Array.from({ length: 44 }, () => [0x02, 0x01, 0x00]).flat()]);
    assert.equal(derElementCount(long, 1000), 45);
  });

  it('stops past its maximum, whatever the size of the data', () => {
    const many = Uint8Array.from([0x30, 0x82, 0x4e, 0x20, ...Array.from({ length: 10_000 }, () => [0x05, 0x00]).flat()]);
    const count = derElementCount(many, 512);
    assert.ok(count > 512 && count < 520, String(count));
  });

  it('counts what it could read of data that is not DER', () => {
    assert.equal(derElementCount(bytes(0x30, 0x10, 0x02), 100), 0);
    assert.equal(derElementCount(bytes(0x02, 0x01, 0x01, 0x30, 0x05), 100), 1);
    assert.equal(derElementCount(bytes(), 100), 0);
  });
});
