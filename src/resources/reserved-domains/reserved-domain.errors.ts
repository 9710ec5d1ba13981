// The errors of reserved domains, and of the domain names they share with agent ingresses
// (domain-names.ts throws those for both kinds).
import { entry, shortList, throwersOf } from '../../core/errors.js';

export const reservedDomainCatalogue = {
  // Domain names (reserved domains and agent ingresses)
  domainEmpty: entry<{ field: string }>(401, 400, 'The domain name is empty.', (a) => `${a.field} is empty; give a domain name such as app.example.com.`),
  domainCharacter: entry<{ value: string; character: string }>(
    406,
    400,
    'The domain name has a character other than letters, digits, hyphens and dots.',
    (a) => `domain '${a.value}' has the character '${a.character}'; a name may have letters, digits, hyphens and dots (and a leading '*.' for a wildcard).`,
  ),
  domainLabelStart: entry<{ value: string; label: string }>(
    407,
    400,
    'A label of the domain name starts with a hyphen.',
    (a) => `domain '${a.value}' has the label '${a.label}', which starts with a hyphen; each label must start with a letter or digit.`,
  ),
  domainLabelEnd: entry<{ value: string; label: string }>(
    408,
    400,
    'A label of the domain name ends with a hyphen.',
    (a) => `domain '${a.value}' has the label '${a.label}', which ends with a hyphen; each label must end with a letter or digit.`,
  ),
  domainEmptyLabel: entry<{ value: string }>(
    409,
    400,
    'The domain name has an empty label (two dots in a row, or a leading dot).',
    (a) => `domain '${a.value}' has an empty label (two dots in a row, or a leading dot).`,
  ),
  domainDoubleHyphen: entry<{ value: string; label: string }>(
    410,
    400,
    "A label has '--' in its third and fourth characters without being an IDNA A-label (xn--).",
    (a) => `domain '${a.value}' has the label '${a.label}' with '--' in its third and fourth characters, which only IDNA labels (xn--…) may have.`,
  ),
  domainNumericTld: entry<{ value: string; tld: string }>(
    411,
    400,
    'The last label of the domain name is all digits (an address, not a name).',
    (a) => `domain '${a.value}' ends in '${a.tld}', which is no top-level domain; give a domain name, not an IP address.`,
  ),
  domainPunycode: entry<{ value: string; label: string }>(
    429,
    400,
    'An xn-- label of the domain name is not valid Punycode.',
    (a) => `domain '${a.value}' has the label '${a.label}', which is not valid Punycode.`,
  ),
  domainLabelLength: entry<{ value: string; label: string; length: number }>(
    513,
    400,
    'A label of the domain name is longer than 63 characters (internationalized labels counted as A-labels).',
    (a) => `domain '${a.value}' has the label '${a.label}' of ${a.length} characters (as stored, xn-- form for international names); a label has at most 63.`,
  ),
  domainNameLength: entry<{ length: number }>(
    514,
    400,
    'The domain name is longer than 253 characters.',
    (a) => `the domain name has ${a.length} characters; a name has at most 253.`,
  ),
  domainSingleLabel: entry<{ value: string }>(
    448,
    400,
    'The domain name has one label only (a bare top-level domain).',
    (a) => `domain '${a.value}' is a bare top-level domain; give a fully qualified name such as app.${a.value}.`,
  ),
  wildcardPosition: entry<{ value: string }>(
    402,
    400,
    'A wildcard is anywhere but the first label.',
    (a) => `domain '${a.value}' has a '*' that is not the first label; only the first label of a reserved domain may be the wildcard '*'.`,
  ),
  wildcardNotAllowed: entry<{ value: string }>(
    6704,
    400,
    'An agent ingress domain is a wildcard; it must be one name.',
    (a) => `agent ingress domain '${a.value}' has a '*'; an agent ingress is one domain, not a wildcard (its regional names are made under it).`,
  ),
  wildcardLabel: entry<{ value: string; label: string }>(
    403,
    400,
    "The wildcard label is not exactly '*'.",
    (a) => `domain '${a.value}' has the label '${a.label}'; a wildcard label must be exactly '*'.`,
  ),
  wildcardSuffix: entry<{ value: string }>(
    416,
    400,
    'The wildcard covers a whole top-level domain.',
    (a) => `domain '${a.value}' would cover a whole top-level domain; a wildcard needs a base of two or more labels.`,
  ),
  domainReserved: entry<{ value: string }>(
    404,
    400,
    "The name is one of the service's own base domains or zones, which cannot be reserved.",
    (a) => `'${a.value}' is one of the service's own domains and cannot be reserved; reserve a name under it instead.`,
  ),
  // An agent ingress domain, and every name under it, belongs to the account of the ingress.
  domainInOthersIngress: entry<{ value: string }>(
    454,
    409,
    "The domain is another account's agent ingress domain, is under one, or (a wildcard) covers one.",
    (a) => `domain '${a.value}' overlaps an agent ingress domain of another account, which holds that domain and every name under it.`,
  ),
  ingressUnderOthers: entry<{ value: string }>(
    455,
    409,
    "The agent ingress domain is under another account's agent ingress domain, or covered by another account's wildcard reservation.",
    (a) => `agent ingress domain '${a.value}' is under an agent ingress domain, or a wildcard reserved domain, of another account.`,
  ),
  ingressOverOthers: entry<{ value: string }>(
    456,
    409,
    'Another account has reserved the domain, or holds a reserved domain or an agent ingress under it.',
    (a) =>
      `agent ingress domain '${a.value}' has names of another account at or under it (a reserved domain or an agent ingress); an agent ingress domain and every name under it belong to one account.`,
  ),

  // Reserved domains
  domainTakenByYou: entry<{ value: string; id: string }>(
    413,
    409,
    'The domain is already reserved by this account.',
    (a) => `domain '${a.value}' is already reserved by your account (${a.id}).`,
  ),
  domainTakenByOther: entry<{ value: string }>(
    414,
    409,
    'The domain is reserved by another account.',
    (a) => `domain '${a.value}' is reserved by another account.`,
  ),
  wildcardConflict: entry<{ value: string }>(
    417,
    409,
    "The domain and another account's reservation overlap through a wildcard.",
    (a) =>
      `domain '${a.value}' overlaps a name reserved by another account: a wildcard covers every name under its base, so the two cannot belong to different accounts.`,
  ),
  certificateSourceTwice: entry(
    434,
    400,
    'certificate_id and certificate_management_policy are both given; a domain has one source of certificates.',
    () => 'certificate_id and certificate_management_policy are mutually exclusive; give one of them.',
  ),
  managedCertificateAttached: entry<{ id: string }>(
    436,
    400,
    'The certificate to detach or replace is managed by a certificate management policy.',
    (a) =>
      `the certificate of ${a.id} is managed by its certificate_management_policy; detach the policy first (DELETE /reserved_domains/${a.id}/certificate_management_policy).`,
  ),
  serviceDomainPolicy: entry<{ value: string }>(
    439,
    400,
    "A certificate management policy is given for a name under the service's own base domain.",
    (a) => `domain '${a.value}' is under the service's own base domain, whose certificate serves it; it takes no certificate_management_policy.`,
  ),
  serviceDomainCertificate: entry<{ value: string }>(
    440,
    400,
    "A certificate is given for a name under the service's own base domain.",
    (a) => `domain '${a.value}' is under the service's own base domain, whose certificate serves it; it takes no certificate_id.`,
  ),
  certificateNotCovering: entry<{ id: string; domain: string; names: readonly string[] }>(
    452,
    400,
    'The TLS certificate does not name the domain.',
    (a) => `TLS certificate ${a.id} does not cover '${a.domain}'; it names ${a.names.length > 0 ? shortList(a.names) : 'no DNS name'}.`,
  ),
  certificateIssued: entry<{ id: string }>(
    453,
    400,
    'certificate_id names a certificate that edgeplane issued for a policy; only uploaded ones can be attached.',
    (a) => `TLS certificate ${a.id} was issued for a certificate management policy; certificate_id takes an uploaded certificate.`,
  ),
  domainInUseByEdge: entry<{ id: string; edges: readonly string[] }>(
    446,
    409,
    'The reserved domain is still served by an edge or a cloud endpoint.',
    (a) => `reserved domain ${a.id} is served by ${shortList(a.edges)}; remove it from the edge's hostports, or delete the edge or cloud endpoint, first.`,
  ),
} as const;

/** Error factories: `throw reservedDomainErrors.domainEmpty(…)`. */
export const reservedDomainErrors = throwersOf(reservedDomainCatalogue);
