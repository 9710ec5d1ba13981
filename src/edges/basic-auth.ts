// HTTP Basic authentication of an agent endpoint (RFC 7617): the Authorization header's
// credentials against the endpoint's users. Written here because it is a few lines on
// node:crypto: the credentials are hashed and compared with every stored digest in constant time,
// so neither a user name nor a password's length shows in the time an answer takes.
import { timingSafeEqual } from 'node:crypto';
import { basicAuthDigest, type BasicAuthModule } from './agent-options.js';

/** Whether the Authorization header carries the credentials of one of the module's users. */
export function basicAuthAllowed(module: BasicAuthModule, authorization: string | undefined): boolean {
  const match = /^basic[ \t]+([A-Za-z0-9+/=._~-]+)[ \t]*$/i.exec(authorization ?? '');
  if (!match) return false;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  const given = basicAuthDigest(decoded.slice(0, colon), decoded.slice(colon + 1));
  // Every digest is compared, whichever matches: the time does not tell which user it was.
  let allowed = false;
  for (const digest of module.digests) allowed = timingSafeEqual(digest, given) || allowed;
  return allowed;
}

/** The challenge of a 401: the realm is the host, as ngrok's is the endpoint. */
export function basicAuthChallenge(host: string): string {
  return `Basic realm="${host.replace(/["\\]/g, '')}", charset="UTF-8"`;
}
