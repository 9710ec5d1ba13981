// The sign-in gate as the data plane makes it: the methods it knows, the way they reach identity
// providers (the CAs trusted, the timeout), and the session clock.
import type { Logger } from 'pino';
import type { Sealer } from '../../lib/crypto/sealer.js';
import { SignInGate } from './gate.js';
import { idpFetch } from './idp-http.js';
import type { SignInMethods } from './method.js';
import { oauthMethod, type OAuthSettings } from './oauth.js';
import { oidcMethod } from './oidc.js';
import { samlMethod } from './saml.js';

export interface SignInSettings extends OAuthSettings {
  /** More CAs to trust for identity providers (PEM), beside Node's. */
  identityCa?: string;
  /** The session clock (milliseconds since the epoch); tests move it instead of sleeping. */
  now?: () => number;
  /** Methods beside (or instead of) the built-in ones. */
  methods?: SignInMethods;
}

export function createSignInGate(settings: SignInSettings, deps: { sealer: Sealer; log: Logger; timeoutMs: number }): SignInGate {
  const fetch = idpFetch({ timeoutMs: deps.timeoutMs, ...(settings.identityCa && { ca: settings.identityCa }) });
  return new SignInGate({
    sealer: deps.sealer,
    log: deps.log,
    timeoutMs: deps.timeoutMs,
    ...(settings.now && { now: settings.now }),
    methods: { oauth: oauthMethod(settings, fetch), oidc: oidcMethod(fetch), saml: samlMethod, ...settings.methods },
  });
}
