// Why provisioning a certificate failed, in the two kinds the API reports: DNS_ERROR, which the
// user must fix (a record missing or wrong, a CAA record refusing the CA, a challenge the CA could
// not reach), and INTERNAL_ERROR, which is temporary (the CA or a resolver down, timeouts, 5xx,
// rate limits) and retried. Both are retried with backoff; DNS_ERROR is also checked again at once
// when the user changes the resource.
import type { CertificateSubject, DnsExpectation } from './certificate-subjects.js';

export type ProblemCode = 'DNS_ERROR' | 'INTERNAL_ERROR';

export class CertificateProblem extends Error {
  constructor(
    readonly code: ProblemCode,
    message: string,
  ) {
    super(message);
    this.name = 'CertificateProblem';
  }
}

/** The code of any error a job met: DNS_ERROR only when it says so. */
export function problemCode(error: unknown): ProblemCode {
  return error instanceof CertificateProblem ? error.code : 'INTERNAL_ERROR';
}

/**
 * ACME problem types (RFC 8555 §6.7) of a failed challenge that the domain's owner must fix: the
 * CA found no or wrong records, a CAA record that forbids it, or could not reach the challenge.
 */
const DNS_PROBLEMS = new Set(['dns', 'caa', 'connection', 'unauthorized', 'incorrectResponse', 'tls', 'rejectedIdentifier', 'unknownHost']);

export function isDnsProblemType(type: string | undefined): boolean {
  return type !== undefined && DNS_PROBLEMS.has(type.replace(/^urn:ietf:params:acme:error:/, ''));
}

/** The lookups DNS checks need (src/lib/dns/resolver.ts): answers lower case, without the trailing dot, [] when none. */
export interface DnsChecker {
  cname(name: string): Promise<string[]>;
  ns(name: string): Promise<string[]>;
}

const normalized = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * The first expectation DNS does not meet, as a message that says what was found and what is
 * wanted; undefined when all hold. A lookup that fails (the resolver timed out) throws: that is
 * not the user's to fix.
 */
export async function checkDnsExpectations(dns: DnsChecker, subject: Pick<CertificateSubject, 'expectations'>): Promise<string | undefined> {
  for (const expectation of subject.expectations) {
    const problem = await checkOne(dns, expectation);
    if (problem) return problem;
  }
  return undefined;
}

async function checkOne(dns: DnsChecker, expectation: DnsExpectation): Promise<string | undefined> {
  if (expectation.type === 'CNAME') {
    const found = (await dns.cname(expectation.name)).map(normalized);
    if (found.length === 1 && found[0] === normalized(expectation.want)) return undefined;
    const seen = found.length === 0 ? 'has no CNAME record' : `has CNAME ${found.join(', ')}`;
    return `${expectation.name} ${seen}; it must have a CNAME record pointing to ${expectation.want}.`;
  }
  const found = [...new Set((await dns.ns(expectation.name)).map(normalized))].sort();
  const want = [...new Set(expectation.want.map(normalized))].sort();
  if (found.length === want.length && found.every((n, i) => n === want[i])) return undefined;
  const seen = found.length === 0 ? 'has no NS records' : `has NS records ${found.join(', ')}`;
  return `${expectation.name} ${seen}; it must be delegated with NS records to exactly ${want.join(', ')}.`;
}
