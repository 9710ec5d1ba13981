// The ACL rules of a credential, checked without a store: each form's stored shape, and the
// error (code and words) of each kind of mistake.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/core/errors.js';
import { MAX_ACL_RULES, readAcl, readAclRule } from '../../src/resources/credentials/credential-acl.js';
import { newCredentialMaterial } from '../../src/resources/credentials/credential.token.js';
import { hashSecret } from '../../src/resources/api-keys/api-key.token.js';

function refusal(rule: string): { code: string; message: string } {
  try {
    readAclRule(rule, 0);
  } catch (e) {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 400);
    return { code: e.errorCode, message: e.message };
  }
  assert.fail(`${rule} was accepted`);
}

describe('credential ACL rules', () => {
  it('keeps everything-rules as they are and stores domains lower case, as A-labels, without the root dot', () => {
    assert.equal(readAclRule('*', 0), '*');
    assert.equal(readAclRule('bind:*', 0), 'bind:*');
    assert.equal(readAclRule('bind:API.Example.com.', 0), 'bind:api.example.com');
    assert.equal(readAclRule('bind:*.Bücher.example', 0), 'bind:*.xn--bcher-kva.example');
    assert.equal(readAclRule('bind:xn--bcher-kva.example', 0), 'bind:xn--bcher-kva.example');
  });

  it('takes labels key=value, with a whole key or value as a wildcard, and leaves them as written', () => {
    for (const rule of ['bind:env=prod', 'bind:Env=Prod', 'bind:*=prod', 'bind:env=*', 'bind:*=*', 'bind:edge=région-1', 'bind:k=a=b', 'bind:a.b/c=d:e'])
      assert.equal(readAclRule(rule, 0), rule);
  });

  it('names the rule and its place in the list when the form is unknown', () => {
    for (const rule of [
      '',
      'bind',
      'Bind:app.example.com',
      'bind :app.example.com',
      'connect:app.example.com',
      'app.example.com',
      '**',
      'bind:1.tcp.example.com:20002',
      'bind:[::1]:22',
    ]) {
      const { code, message } = refusal(rule);
      assert.equal(code, 'ERR_EP_600', rule);
      assert.ok(message.startsWith(`acl[0] '${rule}' is not an ACL rule`), message);
    }
    assert.throws(
      () => readAcl(['*', 'bind:ok.example.com', 'nope']),
      (e: ApiError) => e.errorCode === 'ERR_EP_600' && e.message.startsWith("acl[2] 'nope'"),
    );
  });

  it('says what is wrong with a domain', () => {
    const cases: [string, RegExp][] = [
      ['bind:', /the domain is empty/],
      ['bind:a..example.com', /empty label/],
      ['bind:a b.example.com', /' ' is not allowed/],
      ['bind:-a.example.com', /starts with a hyphen/],
      ['bind:a-.example.com', /ends with a hyphen/],
      ['bind:ab--c.example.com', /third and fourth/],
      ['bind:xn--zz.example.com', /Punycode/],
      [`bind:${'a'.repeat(64)}.example.com`, /64 characters long, more than 63/],
      [`bind:${'abcdefghi.'.repeat(26)}com`, /263 characters long, more than 253/],
      ['bind:example', /single label/],
      ['bind:example.123', /all digits/],
      ['bind:a.*.example.com', /only '\*\.' at the start/],
      ['bind:*a.example.com', /only '\*\.' at the start/],
      ['bind:*.com', /two or more labels/],
    ];
    for (const [rule, message] of cases) {
      const refused = refusal(rule);
      assert.equal(refused.code, 'ERR_EP_601', rule);
      assert.match(refused.message, message, rule);
      assert.ok(refused.message.includes(`'${rule}'`), refused.message);
    }
  });

  it('says what is wrong with a label', () => {
    const cases: [string, RegExp][] = [
      ['bind:=v', /key is empty/],
      ['bind:k=', /value is empty/],
      ['bind:k\t=v', /space or a control character/],
      ['bind:k=v\u0000', /space or a control character/],
      ['bind:k*=v', /whole key or value/],
      ['bind:k=*v', /whole key or value/],
      [`bind:${'é'.repeat(65)}=v`, /key is longer than 128 bytes/],
      [`bind:k=${'é'.repeat(129)}`, /value is longer than 256 bytes/],
    ];
    for (const [rule, message] of cases) {
      const refused = refusal(rule);
      assert.equal(refused.code, 'ERR_EP_602', rule);
      assert.match(refused.message, message, rule);
    }
    assert.equal(readAclRule(`bind:${'é'.repeat(64)}=${'é'.repeat(128)}`, 0).length, 5 + 64 + 1 + 128, 'the limits are in UTF-8 bytes, inclusive');
  });

  it(`refuses more than ${MAX_ACL_RULES} rules before looking at any`, () => {
    assert.equal(readAcl(Array.from({ length: MAX_ACL_RULES }, () => '*')).length, MAX_ACL_RULES);
    assert.throws(
      () => readAcl(Array.from({ length: MAX_ACL_RULES + 1 }, () => 'bad')),
      (e: ApiError) => e.errorCode === 'ERR_EP_603',
    );
  });
});

describe('credential tokens', () => {
  it('are <id without cr_>_<40 base62>, and only the hash of the secret is kept', () => {
    const { id, token, secret_hash } = newCredentialMaterial();
    assert.match(id, /^cr_[0-9A-Za-z]{27}$/);
    assert.equal(token.slice(0, 27), id.slice(3));
    const secret = token.slice(28);
    assert.match(secret, /^[0-9A-Za-z]{40}$/);
    assert.equal(secret_hash, hashSecret(secret));
    assert.ok(!secret_hash.includes(secret));
  });
});
