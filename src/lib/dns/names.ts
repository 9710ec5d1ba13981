// DNS names as users type them: validated and put into the one form they are stored in, lower
// case ASCII with internationalized labels as A-labels (`bücher.example` → `xn--bcher-kva.example`).
// node:url's domainToASCII does the IDNA (UTS #46) mapping; it is lenient about what it lets
// through (underscores, empty labels), so the DNS rules are checked here on its result.
import { domainToASCII, domainToUnicode } from 'node:url';

export const MAX_NAME_LENGTH = 253;
export const MAX_LABEL_LENGTH = 63;

/** Why a name is refused; each has its own error code in the API. */
export type NameProblem =
  | { problem: 'empty' }
  | { problem: 'character'; character: string }
  | { problem: 'empty-label' }
  | { problem: 'label-start'; label: string }
  | { problem: 'label-end'; label: string }
  | { problem: 'double-hyphen'; label: string }
  | { problem: 'punycode'; label: string }
  | { problem: 'label-length'; label: string; length: number }
  | { problem: 'name-length'; length: number }
  | { problem: 'single-label' }
  | { problem: 'numeric-tld'; tld: string }
  | { problem: 'wildcard-position' }
  | { problem: 'wildcard-not-allowed' }
  | { problem: 'wildcard-label'; label: string }
  | { problem: 'wildcard-suffix' };

export type ParsedName = { ok: true; name: string; wildcard: boolean } | ({ ok: false } & NameProblem);

const LABEL = /^[a-z0-9-]+$/;

/**
 * `value` as a stored name, or why it is no valid name. A trailing dot (the root) is dropped.
 * `wildcard`: whether `*` may be the first label.
 */
export function parseDomainName(value: string, options: { wildcard: boolean }): ParsedName {
  const trimmed = value.endsWith('.') ? value.slice(0, -1) : value;
  if (trimmed === '') return { ok: false, problem: 'empty' };
  const bad = /[^\p{L}\p{M}\p{N}.*-]/u.exec(trimmed);
  if (bad) return { ok: false, problem: 'character', character: bad[0] };
  const raw = trimmed.split('.');
  if (raw.some((l) => l === '')) return { ok: false, problem: 'empty-label' };

  const wildcard = raw[0] === '*';
  for (const [i, label] of raw.entries()) {
    if (!label.includes('*')) continue;
    if (!options.wildcard) return { ok: false, problem: 'wildcard-not-allowed' };
    if (i > 0) return { ok: false, problem: 'wildcard-position' };
    if (label !== '*') return { ok: false, problem: 'wildcard-label', label };
  }
  const rest = wildcard ? raw.slice(1) : raw;
  if (rest.length === 0) return { ok: false, problem: 'single-label' };

  const labels: string[] = [];
  for (const label of rest) {
    // One label at a time, so that a problem names the label the user wrote.
    const ascii = /^[\x21-\x7e]+$/.test(label) ? label.toLowerCase() : domainToASCII(label);
    if (ascii === '' || !LABEL.test(ascii)) return { ok: false, problem: 'character', character: firstBadCharacter(label) };
    if (ascii.length > MAX_LABEL_LENGTH) return { ok: false, problem: 'label-length', label, length: ascii.length };
    if (ascii.startsWith('-')) return { ok: false, problem: 'label-start', label };
    if (ascii.endsWith('-')) return { ok: false, problem: 'label-end', label };
    if (ascii.slice(2, 4) === '--') {
      if (!ascii.startsWith('xn--')) return { ok: false, problem: 'double-hyphen', label };
      // A-label: it must decode, and encode back to itself.
      const unicode = domainToUnicode(ascii);
      if (unicode === '' || unicode === ascii || domainToASCII(unicode) !== ascii) return { ok: false, problem: 'punycode', label };
    }
    labels.push(ascii);
  }
  if (labels.length < 2) return { ok: false, problem: wildcard ? 'wildcard-suffix' : 'single-label' };
  const tld = labels[labels.length - 1]!;
  if (/^[0-9]+$/.test(tld)) return { ok: false, problem: 'numeric-tld', tld };
  const name = (wildcard ? ['*', ...labels] : labels).join('.');
  if (name.length > MAX_NAME_LENGTH) return { ok: false, problem: 'name-length', length: name.length };
  return { ok: true, name, wildcard };
}

function firstBadCharacter(label: string): string {
  return /[^a-zA-Z0-9-]/.exec(label)?.[0] ?? label;
}

/** Whether `name` is `base` or a name under it (`a.b.example.com` under `example.com`). */
export function isUnder(name: string, base: string): boolean {
  return name === base || name.endsWith(`.${base}`);
}

/** The names a wildcard `*.example.com` covers are those strictly under `example.com`. */
export function wildcardBase(name: string): string | undefined {
  return name.startsWith('*.') ? name.slice(2) : undefined;
}

/**
 * Whether a certificate name (`app.example.com`, `*.example.com`) covers a domain (`app.example.com`,
 * `*.example.com`), as TLS matching does: a certificate wildcard stands for exactly one label, and a
 * wildcard domain needs the same wildcard in the certificate.
 */
export function certificateNameCovers(certName: string, domain: string): boolean {
  const cert = certName.toLowerCase();
  if (cert === domain) return true;
  if (domain.startsWith('*.')) return false;
  const base = wildcardBase(cert);
  if (base === undefined) return false;
  const dot = domain.indexOf('.');
  return dot > 0 && domain.slice(dot + 1) === base;
}
