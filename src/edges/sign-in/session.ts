// Sign-in sessions at the edge, kept by the browser: cookies sealed with AES-256-GCM under keys
// derived from the master key, so that any instance opens them with no store and nobody else can
// make or read one. Each sealed value is bound to its owner (the route) and its purpose through
// the additional data: a cookie of one route does not open on another, a state cookie is not a
// session. The same sealing carries the short-lived state of a sign-in round trip and the
// handoff token by which the API host (SAML's ACS) passes an identity to the edge host.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Sealer } from '../../lib/crypto/sealer.js';

export type SignInMethodName = 'oauth' | 'oidc' | 'saml';

/** Who signed in, as the identity provider says. */
export interface Identity {
  /** The provider's stable id of the user: OIDC's `sub`, GitHub's user id, SAML's NameID. */
  subject: string;
  email?: string;
  name?: string;
  /** Groups the provider names (SAML's group attribute); dropped from a session too large for a cookie. */
  groups?: string[];
}

/** The session settings every sign-in module has, as stored. */
export interface SessionSettings {
  cookie_prefix: string;
  /** Seconds without a request after which the session ends; 0 for none. */
  inactivity_timeout: number;
  /** Seconds after sign-in at which the session ends; 0 for none. */
  maximum_duration: number;
}

export interface Session {
  /** The route it was made for. */
  owner: string;
  method: SignInMethodName;
  identity: Identity;
  /** Milliseconds since the epoch, by the session clock. */
  signedInAt: number;
  lastSeenAt: number;
  /** When the provider last said the user may still sign in (auth_check_interval). */
  checkedAt: number;
  /** The provider's access token, kept for those checks; dropped from a session too large for a cookie. */
  accessToken?: string;
}

/** One sign-in under way: what the callback must find again. */
export interface PendingSignIn {
  /** The `state` parameter: the route's id, a dot, and 32 random bytes (base64url). */
  id: string;
  nonce: string;
  /** The PKCE code verifier (RFC 7636: 43 characters of base64url). */
  codeVerifier: string;
  /** Path and query to go back to once signed in. */
  returnTo: string;
  method: SignInMethodName;
  expiresAt: number;
}

/** What the API host hands to the edge host after a sign-in it took (SAML's ACS). */
export interface Handoff {
  method: SignInMethodName;
  identity: Identity;
  /** The pending sign-in it ends (its `id`); absent for one the identity provider started. */
  state?: string;
}

export type SessionRead =
  | { kind: 'valid'; session: Session }
  | { kind: 'none' }
  /** Forged, tampered with, made for another route, or not a cookie of this version. */
  | { kind: 'invalid' }
  /** Past maximum_duration. */
  | { kind: 'expired' }
  /** Past inactivity_timeout. */
  | { kind: 'inactive' };

/** How long a sign-in round trip may take, from the redirect to the callback. */
export const STATE_TTL_MS = 10 * 60_000;
/** How long a handoff token is good for: one redirect. */
export const HANDOFF_TTL_MS = 60_000;
/** Sign-ins under way at once in one browser for one route (several tabs); the oldest is dropped past it. */
const MAX_PENDING = 4;
/** Browsers keep cookies up to 4096 bytes, name and attributes included. */
const MAX_COOKIE_VALUE = 3800;
const COOKIE_ATTRIBUTES = 'Path=/; Secure; HttpOnly; SameSite=Lax';
const VERSION = 'v1';
const METHODS: readonly SignInMethodName[] = ['oauth', 'oidc', 'saml'];

/** The cookies of a request, by name (the first of a repeated name wins, as browsers send the most specific first). */
export function parseCookies(header: string | string[] | undefined): Map<string, string> {
  // Written by hand: a dozen lines, and no cookie parser is a dependency.
  const out = new Map<string, string>();
  for (const line of Array.isArray(header) ? header : header === undefined ? [] : [header])
    for (const part of line.split(';')) {
      const eq = part.indexOf('=');
      if (eq <= 0) continue;
      const name = part.slice(0, eq).trim();
      if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
    }
  return out;
}

export const sessionCookieName = (settings: Pick<SessionSettings, 'cookie_prefix'>) => `${settings.cookie_prefix}session`;
export const stateCookieName = (settings: Pick<SessionSettings, 'cookie_prefix'>) => `${settings.cookie_prefix}sign-in`;

/** The route a `state` parameter names (its part before the dot). */
export function ownerOfState(state: string): string | undefined {
  const dot = state.indexOf('.');
  return dot > 0 ? state.slice(0, dot) : undefined;
}

const random = () => randomBytes(32).toString('base64url');

/**
 * Values used once (a sign-in's state, a handoff token), remembered until they expire so that a
 * replay on this instance is refused. Bounded: past `max` the oldest are forgotten.
 */
class UsedOnce {
  private readonly seen = new Map<string, number>();

  constructor(private readonly max = 100_000) {}

  /** True the first time `id` is used before `expiresAt`. */
  use(id: string, expiresAt: number, now: number): boolean {
    if (this.seen.has(id)) return false;
    for (const [old, until] of this.seen) {
      if (until > now && this.seen.size < this.max) break;
      this.seen.delete(old);
    }
    this.seen.set(id, expiresAt);
    return true;
  }
}

/** Short field names: every byte is in every request's cookie. */
interface SealedSession {
  m: SignInMethodName;
  s: string;
  e?: string;
  n?: string;
  g?: string[];
  t: number;
  l: number;
  c: number;
  a?: string;
}

export class SignInCookies {
  private readonly keys: Record<'session' | 'state' | 'handoff', Buffer>;
  private readonly used = new UsedOnce();

  /** `now` is the session clock (milliseconds since the epoch); tests move it instead of sleeping. */
  constructor(
    sealer: Sealer,
    readonly now: () => number = Date.now,
  ) {
    this.keys = { session: sealer.derive('sign-in session'), state: sealer.derive('sign-in state'), handoff: sealer.derive('sign-in handoff') };
  }

  // Sessions

  /** The session of `owner` among the request's cookies, and whether it still holds. */
  readSession(owner: string, settings: SessionSettings, cookies: ReadonlyMap<string, string>): SessionRead {
    const text = cookies.get(sessionCookieName(settings));
    if (text === undefined) return { kind: 'none' };
    const sealed = this.open<SealedSession>('session', owner, text);
    if (!sealed || !METHODS.includes(sealed.m) || typeof sealed.s !== 'string' || typeof sealed.t !== 'number' || typeof sealed.l !== 'number')
      return { kind: 'invalid' };
    const now = this.now();
    if (settings.maximum_duration > 0 && now - sealed.t >= settings.maximum_duration * 1000) return { kind: 'expired' };
    if (settings.inactivity_timeout > 0 && now - sealed.l >= settings.inactivity_timeout * 1000) return { kind: 'inactive' };
    const identity: Identity = {
      subject: sealed.s,
      ...(sealed.e !== undefined && { email: sealed.e }),
      ...(sealed.n !== undefined && { name: sealed.n }),
      ...(sealed.g && { groups: sealed.g }),
    };
    const session: Session = { owner, method: sealed.m, identity, signedInAt: sealed.t, lastSeenAt: sealed.l, checkedAt: sealed.c };
    if (sealed.a !== undefined) session.accessToken = sealed.a;
    return { kind: 'valid', session };
  }

  /** A session that begins now. */
  newSession(owner: string, method: SignInMethodName, identity: Identity, accessToken?: string): Session {
    const now = this.now();
    return { owner, method, identity, signedInAt: now, lastSeenAt: now, checkedAt: now, ...(accessToken !== undefined && { accessToken }) };
  }

  /**
   * The Set-Cookie value of a session. A session too large for a cookie loses its access token
   * first (then the next auth check signs the user in again instead), then its groups.
   */
  sessionCookie(settings: SessionSettings, session: Session): string {
    const { identity } = session;
    const full: SealedSession = {
      m: session.method,
      s: identity.subject,
      ...(identity.email !== undefined && { e: identity.email }),
      ...(identity.name !== undefined && { n: identity.name }),
      ...(identity.groups && { g: identity.groups }),
      t: session.signedInAt,
      l: session.lastSeenAt,
      c: session.checkedAt,
      ...(session.accessToken !== undefined && { a: session.accessToken }),
    };
    const { a: _token, ...withoutToken } = full;
    const { g: _groups, ...smallest } = withoutToken;
    const value = [full, withoutToken, smallest].map((v) => this.seal('session', session.owner, v)).find((v) => v.length <= MAX_COOKIE_VALUE);
    if (value === undefined) throw new Error('the identity is too large for a session cookie');
    return `${sessionCookieName(settings)}=${value}; ${COOKIE_ATTRIBUTES}${this.maxAge(settings, session)}`;
  }

  /**
   * The cookie that moves the session's last-seen time to now, when inactivity_timeout counts and
   * it is due: at most once a minute (a tenth of the timeout when that is shorter), so that not
   * every answer carries a new cookie.
   */
  touch(settings: SessionSettings, session: Session): string | undefined {
    if (settings.inactivity_timeout <= 0) return undefined;
    const now = this.now();
    if (now - session.lastSeenAt < Math.min(60_000, settings.inactivity_timeout * 100)) return undefined;
    session.lastSeenAt = now;
    return this.sessionCookie(settings, session);
  }

  clearSession(settings: SessionSettings): string {
    return `${sessionCookieName(settings)}=; ${COOKIE_ATTRIBUTES}; Max-Age=0`;
  }

  /** Whichever limit comes first; none (a cookie for the browser's session) when neither is set. */
  private maxAge(settings: SessionSettings, session: Session): string {
    const limits = [
      ...(settings.maximum_duration > 0 ? [session.signedInAt + settings.maximum_duration * 1000 - this.now()] : []),
      ...(settings.inactivity_timeout > 0 ? [settings.inactivity_timeout * 1000] : []),
    ];
    return limits.length === 0 ? '' : `; Max-Age=${Math.max(0, Math.ceil(Math.min(...limits) / 1000))}`;
  }

  // The state of sign-ins under way

  /** A new sign-in of `owner`, and the state cookie that remembers it (with the others under way in this browser). */
  startSignIn(
    owner: string,
    settings: SessionSettings,
    cookies: ReadonlyMap<string, string>,
    method: SignInMethodName,
    returnTo: string,
  ): { pending: PendingSignIn; cookie: string } {
    const now = this.now();
    const pending: PendingSignIn = { id: `${owner}.${random()}`, nonce: random(), codeVerifier: random(), returnTo, method, expiresAt: now + STATE_TTL_MS };
    const kept = this.pendingOf(owner, settings, cookies).slice(-(MAX_PENDING - 1));
    return { pending, cookie: this.stateCookie(owner, settings, [...kept, pending]) };
  }

  /**
   * The sign-in `state` names, taken out of the state cookie (used once: a second callback with
   * the same state is refused even with the old cookie), and the state cookie left.
   */
  finishSignIn(owner: string, settings: SessionSettings, cookies: ReadonlyMap<string, string>, state: string): { pending?: PendingSignIn; cookie: string } {
    const all = this.pendingOf(owner, settings, cookies);
    const pending = all.find((p) => p.id === state);
    const left = all.filter((p) => p !== pending);
    const cookie = this.stateCookie(owner, settings, left);
    if (!pending || !this.used.use(`state:${pending.id}`, pending.expiresAt, this.now())) return { cookie };
    return { pending, cookie };
  }

  /** The unexpired sign-ins under way in the state cookie; none when it is missing, forged or another route's. */
  private pendingOf(owner: string, settings: SessionSettings, cookies: ReadonlyMap<string, string>): PendingSignIn[] {
    const text = cookies.get(stateCookieName(settings));
    const list = text === undefined ? undefined : this.open<PendingSignIn[]>('state', owner, text);
    const now = this.now();
    return Array.isArray(list) ? list.filter((p) => typeof p?.id === 'string' && typeof p.expiresAt === 'number' && p.expiresAt > now) : [];
  }

  private stateCookie(owner: string, settings: SessionSettings, pending: PendingSignIn[]): string {
    const name = stateCookieName(settings);
    // Path=/ like the session: a sign-in starts on any path, and keeps the others under way (tabs).
    if (pending.length === 0) return `${name}=; ${COOKIE_ATTRIBUTES}; Max-Age=0`;
    return `${name}=${this.seal('state', owner, pending)}; ${COOKIE_ATTRIBUTES}; Max-Age=${STATE_TTL_MS / 1000}`;
  }

  // Handoff tokens

  /** A token that hands `handoff` to the edge host of `owner`, good once for `ttlMs`. */
  sealHandoff(owner: string, handoff: Handoff, ttlMs = HANDOFF_TTL_MS): string {
    return this.seal('handoff', owner, { ...handoff, id: random(), exp: this.now() + ttlMs });
  }

  /** What a handoff token for `owner` carries; undefined when forged, another route's, expired or used before. */
  openHandoff(owner: string, token: string): Handoff | undefined {
    const value = this.open<Handoff & { id: string; exp: number }>('handoff', owner, token);
    if (!value || typeof value.exp !== 'number' || typeof value.identity?.subject !== 'string') return undefined;
    if (value.exp <= this.now() || !this.used.use(`handoff:${value.id}`, value.exp, this.now())) return undefined;
    return { method: value.method, identity: value.identity, ...(value.state !== undefined && { state: value.state }) };
  }

  // Sealing

  /** `v1.` and base64url of IV, ciphertext and tag; the purpose and owner are the additional data. */
  private seal(purpose: keyof SignInCookies['keys'], owner: string, value: unknown): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys[purpose], iv);
    cipher.setAAD(Buffer.from(`${purpose}\n${owner}`, 'utf8'));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
  }

  private open<T>(purpose: keyof SignInCookies['keys'], owner: string, text: string): T | undefined {
    if (!text.startsWith(`${VERSION}.`) || text.length > 8192) return undefined;
    const raw = Buffer.from(text.slice(VERSION.length + 1), 'base64url');
    if (raw.length < 12 + 16) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.keys[purpose], raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(`${purpose}\n${owner}`, 'utf8'));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      const plain = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
      return JSON.parse(plain.toString('utf8')) as T;
    } catch {
      // A tag that does not check (forged, tampered, another route's or purpose's): not a value of ours.
      return undefined;
    }
  }
}
