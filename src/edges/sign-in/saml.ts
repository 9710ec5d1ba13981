// SAML as a sign-in method of the gate (method.ts). On the edge host, a browser with no session
// is sent to the identity provider with an HTTP-Redirect AuthnRequest; its RelayState is sealed
// (saml-protocol.ts) and names the gate's sign-in under way, whose state cookie this host holds.
// The identity provider posts its answer to the ACS on the API host (src/http/saml.ts), which
// checks it and sends the browser back here, to the handoff path, with a sealed handoff token;
// the gate then ends the sign-in against its state cookie, asks `authorize`, and sets the session.
import type { SamlValue } from '../../edge-config/modules/sign-in-modules.js';
import { EDGE_ERRORS, type IngressError } from '../errors.js';
import type { SignInContext, SignInFailure, SignInMethod, SignInStep } from './method.js';
import { authnRequestUrl, newRequestId, sealRelayState } from './saml-protocol.js';
import type { Identity, PendingSignIn } from './session.js';

const failed = (error: IngressError, why: string, detail: string): SignInFailure => ({ kind: 'failed', error, why, detail });

export const samlMethod: SignInMethod<SamlValue> = {
  name: 'saml',

  async start(ctx: SignInContext<SamlValue>, pending: PendingSignIn): Promise<SignInStep | SignInFailure> {
    const module = ctx.module;
    const requestId = newRequestId();
    const relayState = sealRelayState(ctx.sealer, module.service_provider_id, {
      host: ctx.host,
      state: pending.id,
      requestId,
      expiresAt: pending.expiresAt,
    });
    try {
      return { kind: 'redirect', location: authnRequestUrl(module, ctx.sealer, requestId, relayState) };
    } catch (error) {
      // The metadata was checked when the module was set, but only for its shape: samlify reads it here.
      return failed(
        EDGE_ERRORS.idpInvalid,
        `saml: no AuthnRequest could be made (${(error as Error).message.slice(0, 200)})`,
        "the identity provider's metadata could not be used",
      );
    }
  },

  /**
   * The ACS checked the groups when it took the response; checked again here against the module
   * as this instance has it now, so that a change of authorized_groups made meanwhile holds.
   */
  authorize(ctx: SignInContext<SamlValue>, identity: Identity): SignInFailure | undefined {
    const allowed = ctx.module.authorized_groups;
    if (allowed.length === 0 || (identity.groups ?? []).some((g) => allowed.includes(g))) return undefined;
    return failed(
      EDGE_ERRORS.signInRefused,
      `saml: ${identity.subject} is in none of the authorized groups`,
      'you are in none of the groups allowed to sign in',
    );
  },
};
