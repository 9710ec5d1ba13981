// Validation of what a certificate request carries: times, principals, critical options and
// extensions, each refused with a message that names the offending value.
import net from 'node:net';
import { errors } from '../../core/errors.js';
import { parseRfc3339, rfc3339 } from '../../core/time.js';
import { parseCidr } from '../../lib/ip/cidr.js';
import { sshCertificateErrors } from './ssh-certificate.errors.js';

export function parseTime(field: string, value: string): Date {
  const time = parseRfc3339(value);
  if (!time) throw sshCertificateErrors.invalidTimestamp({ field, value: value.slice(0, 64) });
  return time;
}

/**
 * The times a certificate may name. OpenSSH counts validity in unsigned seconds since the
 * epoch, so nothing before 1970; its 64 bits would reach far past the year 9999, but the API
 * writes times back as RFC 3339, whose years have four digits.
 */
export const EARLIEST_VALIDITY = new Date('1970-01-01T00:00:00Z');
export const LATEST_VALIDITY = new Date('9999-12-31T23:59:59Z');

function withinWindow(field: string, time: Date, given: string | undefined): void {
  const seconds = Math.floor(time.getTime() / 1000) * 1000;
  if (seconds >= EARLIEST_VALIDITY.getTime() && seconds <= LATEST_VALIDITY.getTime()) return;
  throw errors.invalidField({
    field,
    problem: `is ${given === undefined ? `${rfc3339(time)} by default` : given}, outside what a certificate can hold (${rfc3339(EARLIEST_VALIDITY)} to ${rfc3339(LATEST_VALIDITY)})`,
  });
}

/** valid_after defaults to now, valid_until to valid_after plus `defaultMs`; until must follow after, both inside the window above. */
export function validity(body: { valid_after?: string; valid_until?: string }, now: Date, defaultMs: number): { after: Date; until: Date } {
  const after = body.valid_after !== undefined ? parseTime('valid_after', body.valid_after) : new Date(Math.floor(now.getTime() / 1000) * 1000);
  const until = body.valid_until !== undefined ? parseTime('valid_until', body.valid_until) : new Date(after.getTime() + defaultMs);
  withinWindow('valid_after', after, body.valid_after);
  withinWindow('valid_until', until, body.valid_until);
  // Certificates count whole seconds; a window that rounds to nothing is no window.
  if (Math.floor(until.getTime() / 1000) <= Math.floor(after.getTime() / 1000)) {
    throw sshCertificateErrors.invalidValidity({ validAfter: after.toISOString(), validUntil: until.toISOString() });
  }
  return { after, until };
}

// eslint-disable-next-line no-control-regex -- finding control characters is what this pattern is for
const CONTROL = /[\u0000-\u001f\u007f]/;

export function userPrincipals(principals: readonly string[]): string[] {
  for (const p of principals) {
    if (p === '') throw sshCertificateErrors.invalidPrincipal({ value: p, problem: 'is empty' });
    if (CONTROL.test(p) || /[\s,]/.test(p))
      throw sshCertificateErrors.invalidPrincipal({ value: p, problem: 'contains whitespace, a comma or a control character' });
  }
  return [...principals];
}

const HOST_PATTERN = /^(?=.{1,253}$)(\*|[A-Za-z0-9*?](?:[A-Za-z0-9*?-]{0,61}[A-Za-z0-9*?])?)(?:\.[A-Za-z0-9*?](?:[A-Za-z0-9*?-]{0,61}[A-Za-z0-9*?])?)*$/;

/** Host names (wildcards allowed, as OpenSSH matches them) or IP addresses. */
export function hostPrincipals(principals: readonly string[]): string[] {
  for (const p of principals) {
    if (net.isIP(p) === 0 && !HOST_PATTERN.test(p))
      throw sshCertificateErrors.invalidPrincipal({ value: p, problem: 'is neither a host name nor an IP address' });
  }
  return [...principals];
}

export const DEFAULT_EXTENSIONS: Record<string, string> = { 'permit-pty': '', 'permit-user-rc': '' };
const FLAG_EXTENSIONS = new Set([
  'no-touch-required',
  'permit-X11-forwarding',
  'permit-agent-forwarding',
  'permit-port-forwarding',
  'permit-pty',
  'permit-user-rc',
]);

export function criticalOptions(options: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(options)) {
    if (name === 'force-command') {
      if (value === '' || CONTROL.test(value))
        throw sshCertificateErrors.invalidOption({ kind: 'critical option', name, problem: 'must be a non-empty command without control characters' });
    } else if (name === 'source-address') {
      const entries = value.split(',');
      for (const entry of entries) {
        const trimmed = entry.trim();
        const parsed = trimmed.includes('/') ? parseCidr(trimmed) : parseCidr(`${trimmed}/${trimmed.includes(':') ? 128 : 32}`);
        if (!parsed.ok) throw sshCertificateErrors.invalidSourceAddress({ value, entry: trimmed });
      }
    } else {
      throw sshCertificateErrors.unknownCriticalOption({ name });
    }
  }
  return options;
}

/** The standard extensions are flags (empty values); others must be name@domain, as PROTOCOL.certkeys asks. */
export function extensions(values: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(values)) {
    if (FLAG_EXTENSIONS.has(name)) {
      if (value !== '') throw sshCertificateErrors.invalidOption({ kind: 'extension', name, problem: 'is a flag and takes an empty value' });
    } else if (!/^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+$/.test(name)) {
      throw sshCertificateErrors.invalidOption({
        kind: 'extension',
        name,
        problem: `is not a standard extension (${[...FLAG_EXTENSIONS].join(', ')}) nor of the form name@domain`,
      });
    } else if (CONTROL.test(value)) {
      throw sshCertificateErrors.invalidOption({ kind: 'extension', name, problem: 'has a value with control characters' });
    }
  }
  return values;
}
