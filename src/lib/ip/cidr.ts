// CIDR parsing and matching, on ipaddr.js. Parsing is strict (four-part decimal IPv4, a mask
// always, network form); matching compiles rules into one hash set per prefix length, so a
// lookup costs one set probe per distinct prefix length, however many rules there are.
import ipaddr from 'ipaddr.js';

export type ParsedCidr =
  | { ok: true; cidr: string; family: 4 | 6; bits: number; address: ipaddr.IPv4 | ipaddr.IPv6 }
  | { ok: false; problem: 'invalid' | 'missing-mask' }
  | { ok: false; problem: 'not-network'; suggestion: string };

function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (text.includes(':') && !text.includes('%') && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return undefined;
}

/** `10.0.0.0/8` → canonical network form; a host address, a bad mask or garbage → the problem. */
export function parseCidr(text: string): ParsedCidr {
  const slash = text.indexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  const address = parseAddress(addressText.trim() === addressText ? addressText : '');
  if (slash === -1) return address ? { ok: false, problem: 'missing-mask' } : { ok: false, problem: 'invalid' };
  const maskText = text.slice(slash + 1);
  if (!address || !/^\d{1,3}$/.test(maskText)) return { ok: false, problem: 'invalid' };
  const bits = Number(maskText);
  const family = address.kind() === 'ipv4' ? 4 : 6;
  if (bits > (family === 4 ? 32 : 128)) return { ok: false, problem: 'invalid' };
  const network =
    family === 4 ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${bits}`) : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${bits}`);
  const canonical = `${network.toString()}/${bits}`;
  if (network.toString() !== address.toString()) return { ok: false, problem: 'not-network', suggestion: canonical };
  return { ok: true, cidr: canonical, family, bits, address: network };
}

/** A client address as a matcher sees it: IPv4-mapped IPv6 addresses become IPv4. */
export function parseClientIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    return ipaddr.process(text);
  } catch {
    return undefined;
  }
}

function words(address: ipaddr.IPv4 | ipaddr.IPv6): number[] {
  const bytes = address.toByteArray();
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i += 4) out.push(((bytes[i]! << 24) | (bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!) >>> 0);
  return out;
}

/** The address's first `bits` bits as a string key. */
function prefixKey(address: number[], bits: number): string {
  let key = '';
  for (let i = 0; i < address.length; i++) {
    const take = Math.max(0, Math.min(32, bits - i * 32));
    const mask = take === 0 ? 0 : take === 32 ? 0xffffffff : (0xffffffff << (32 - take)) >>> 0;
    key += ((address[i]! & mask) >>> 0).toString(36) + '.';
  }
  return key;
}

class PrefixSet {
  private readonly byLength = new Map<number, Set<string>>();
  private lengths: number[] = [];

  add(address: ipaddr.IPv4 | ipaddr.IPv6, bits: number): void {
    let set = this.byLength.get(bits);
    if (!set) {
      set = new Set();
      this.byLength.set(bits, set);
      this.lengths = [...this.byLength.keys()];
    }
    set.add(prefixKey(words(address), bits));
  }

  has(address: number[]): boolean {
    for (const bits of this.lengths) if (this.byLength.get(bits)!.has(prefixKey(address, bits))) return true;
    return false;
  }
}

export interface Rule {
  cidr: string;
  action: 'allow' | 'deny';
}

/** Allowed when some allow rule matches and no deny rule does: deny wins. */
export class IpMatcher {
  private readonly allow = { 4: new PrefixSet(), 6: new PrefixSet() };
  private readonly deny = { 4: new PrefixSet(), 6: new PrefixSet() };

  constructor(rules: readonly Rule[]) {
    for (const rule of rules) {
      const parsed = parseCidr(rule.cidr);
      if (!parsed.ok) continue; // stored rules are canonical; nothing else reaches the table
      (rule.action === 'allow' ? this.allow : this.deny)[parsed.family].add(parsed.address, parsed.bits);
    }
  }

  allows(ip: string): boolean {
    const address = parseClientIp(ip);
    if (!address) return false;
    const family = address.kind() === 'ipv4' ? 4 : 6;
    const w = words(address);
    return this.allow[family].has(w) && !this.deny[family].has(w);
  }
}
