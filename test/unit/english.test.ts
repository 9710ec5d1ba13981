import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withArticle } from '../../src/core/english.js';

describe('withArticle', () => {
  it('says "an" before a vowel sound and "a" before a consonant sound', () => {
    const cases: [string, string][] = [
      ['API key', 'an API key'],
      ['IP restriction', 'an IP restriction'],
      ['HTTPS edge', 'an HTTPS edge'],
      ['SSH certificate authority', 'an SSH certificate authority'],
      ['TLS edge', 'a TLS edge'],
      ['TCP edge', 'a TCP edge'],
      ['agent ingress', 'an agent ingress'],
      ['oauth', 'an oauth'],
      ['oidc', 'an oidc'],
      ['saml', 'a saml'],
      ['user', 'a user'],
      ['unique name', 'a unique name'],
      ['bot user', 'a bot user'],
      ['ip_restriction', 'an ip_restriction'],
      ['string', 'a string'],
      ['integer', 'an integer'],
      ['object', 'an object'],
      ['array', 'an array'],
    ];
    for (const [phrase, expected] of cases) assert.equal(withArticle(phrase), expected);
  });
});
