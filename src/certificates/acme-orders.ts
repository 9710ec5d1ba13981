// Ordering a certificate from an RFC 8555 CA with acme-client: the service's account (one per
// directory, its key created once and stored sealed), an order for the subject's names, each
// authorization proven by the challenge the subject takes (answers published in the store, where
// the built-in HTTP-01 responder and DNS server read them), then a CSR for a key made here.
// Everything here talks to the network or makes keys: it runs in a job, never in a transaction.
import { generateKeyPair } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import { promisify } from 'node:util';
import acme from 'acme-client';
import type { CertificateSettings } from '../config.js';
import { findAcmeAccount, keepAcmeAccount, publishChallenge, setAcmeAccountUrl, withdrawChallenges, type ChallengeType } from '../db/acme.js';
import type { Store } from '../db/store.js';
import type { Sealer } from '../lib/crypto/sealer.js';
import { withoutCredentials } from '../lib/http/url.js';
import { CertificateProblem, isDnsProblemType } from './certificate-problems.js';

const generate = promisify(generateKeyPair);

export interface OrderRequest {
  subjectId: string;
  identifiers: string[];
  keyType: 'rsa' | 'ecdsa';
  challenge: ChallengeType;
  /** For DNS-01: the name whose TXT record answers for `identifier`. */
  challengeName(identifier: string): string;
}

export interface IssuedCertificate {
  /** The chain, leaf first, as the CA sent it. */
  certificatePem: string;
  /** PKCS#8 PEM. */
  keyPem: string;
}

/** How often to ask whether a challenge or order is done; tests shorten it. */
export interface Polling {
  attempts: number;
  minMs: number;
  maxMs: number;
}

const DEFAULT_POLLING: Polling = { attempts: 10, minMs: 1000, maxMs: 10_000 };

/** A challenge answer outlives the job that published it by this much at most. */
const CHALLENGE_TTL_MS = 15 * 60_000;

/**
 * acme-client sends its requests through its own axios instance; it is set up once per process:
 * requests time out (axios waits forever by default), the directory's HTTPS may be trusted
 * through a CA file (beside the public roots), and acme-client does not retry by itself, since it
 * would wait as long as a Retry-After says (hours, for a rate limit) inside one job: the job
 * runner retries instead, with backoff. acme-client still retries a bad nonce, as RFC 8555 asks.
 */
function configureAcmeHttp(settings: CertificateSettings, timeoutMs: number): void {
  if (!unreachableReported) reportUnreachable();
  acme.axios.defaults.timeout = timeoutMs;
  // acme-client's own setting on its instance, which axios's types do not know.
  (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number } }).acmeSettings.retryMaxAttempts = 0;
  if (settings.acmeCaFile) {
    const extra = fs.readFileSync(settings.acmeCaFile, 'utf8');
    acme.axios.defaults.httpsAgent = new https.Agent({ ca: [...tls.rootCertificates, extra], keepAlive: true });
  }
}

let unreachableReported = false;

type Rejected = { response?: unknown; code?: string; message?: string; config?: { url?: string } };

/**
 * acme-client's response interceptor reads `response.config` of a request that got no response
 * (refused, timed out), and so turns every network error into "Cannot read properties of
 * undefined". An interceptor put before it (axios documents `handlers` as public) replaces such an
 * error with one that says what happened, and carries no config, which acme-client passes on.
 */
function reportUnreachable(): void {
  const handlers = (acme.axios.interceptors.response as unknown as { handlers?: unknown[] }).handlers;
  if (!Array.isArray(handlers)) return;
  handlers.unshift({
    fulfilled: (response: unknown) => response,
    rejected: (error: Rejected) => {
      if (error?.response) return Promise.reject(error);
      const what = [error?.code, error?.message].filter(Boolean).join(': ') || 'no response';
      return Promise.reject(new Error(`the ACME server did not answer ${withoutCredentials(error?.config?.url ?? '')} (${what})`));
    },
    synchronous: false,
    runWhen: null,
  });
  unreachableReported = true;
}

export interface AcmeOrdersOptions {
  store: Store;
  sealer: Sealer;
  settings: CertificateSettings;
  polling?: Partial<Polling>;
  /** Per HTTP request to the CA. */
  requestTimeoutMs?: number;
  clock?: { now(): Date };
}

export class AcmeOrders {
  private readonly polling: Polling;
  private readonly clock: { now(): Date };

  constructor(private readonly options: AcmeOrdersOptions) {
    this.polling = { ...DEFAULT_POLLING, ...options.polling };
    this.clock = options.clock ?? { now: () => new Date() };
    configureAcmeHttp(options.settings, options.requestTimeoutMs ?? 30_000);
  }

  /** Orders and downloads a certificate for the request's names; a CertificateProblem says why not. */
  async issue(request: OrderRequest): Promise<IssuedCertificate> {
    const client = await this.client();
    const order = await client.createOrder({ identifiers: request.identifiers.map((value) => ({ type: 'dns', value })) });
    const published: string[] = [];
    try {
      await this.prove(client, order, request, published);
    } finally {
      await withdrawChallenges(this.options.store, published, this.clock.now()).catch(() => {
        // They expire by themselves; a store down now must not hide the order's outcome.
      });
    }
    const keyPem = await newKey(request.keyType);
    const [, csr] = await acme.crypto.createCsr({ altNames: request.identifiers }, keyPem);
    const finalized = await client.finalizeOrder(order, csr);
    const certificatePem = await client.getCertificate(finalized);
    return { certificatePem, keyPem };
  }

  /** Answers every pending authorization of the order and waits until the CA has checked them all. */
  private async prove(client: acme.Client, order: acme.Order, request: OrderRequest, published: string[]): Promise<void> {
    const pending = (await client.getAuthorizations(order)).filter((authz) => authz.status !== 'valid');
    const challenges = [];
    for (const authz of pending) {
      const challenge = authz.challenges.find((c) => c.type === request.challenge);
      if (!challenge) throw new Error(`the CA offered no ${request.challenge} challenge for ${authz.identifier.value}`);
      const value = await client.getChallengeKeyAuthorization(challenge);
      const name = request.challenge === 'http-01' ? challenge.token : request.challengeName(identifierName(authz));
      const expiresAt = new Date(this.clock.now().getTime() + CHALLENGE_TTL_MS);
      published.push(await publishChallenge(this.options.store, { type: request.challenge, name, value, subjectId: request.subjectId, expiresAt }));
      challenges.push(challenge);
    }
    for (const challenge of challenges) await client.completeChallenge(challenge);
    try {
      await Promise.all(challenges.map((challenge) => client.waitForValidStatus(challenge)));
    } catch (error) {
      throw await this.explainInvalid(client, order, error);
    }
  }

  /** A failed challenge as the CA reported it: DNS_ERROR when its problem is one the user must fix. */
  private async explainInvalid(client: acme.Client, order: acme.Order, error: unknown): Promise<Error> {
    const authorizations = await client.getAuthorizations(order).catch(() => []);
    for (const authz of authorizations) {
      const failed = authz.challenges.find((c) => c.status === 'invalid' && c.error);
      const problem = failed?.error as { type?: string; detail?: string } | undefined;
      if (!problem) continue;
      const text = `the CA could not validate ${identifierName(authz)}: ${problem.detail ?? problem.type ?? 'no detail given'}`;
      return isDnsProblemType(problem.type) ? new CertificateProblem('DNS_ERROR', text) : new Error(text);
    }
    return error instanceof Error ? error : new Error(String(error));
  }

  /**
   * A client of the directory's account: the key made and stored once (sealed, bound to the
   * directory), then registered. The account is looked up by its key every time rather than
   * trusted from the stored URL: a CA that forgot it (a test CA restarted) gets it again.
   */
  private async client(): Promise<acme.Client> {
    const { store, sealer, settings } = this.options;
    const directoryUrl = settings.acmeDirectoryUrl;
    const label = `acme-account:${directoryUrl}`;
    let account = await findAcmeAccount(store, directoryUrl);
    if (!account) {
      const keyPem = await newKey('ecdsa');
      account = await keepAcmeAccount(store, {
        directory_url: directoryUrl,
        key_sealed: sealer.seal(keyPem, label),
        account_url: null,
        created_at: this.clock.now().toISOString(),
      });
    }
    const client = new acme.Client({
      directoryUrl,
      accountKey: sealer.open(account.key_sealed, label),
      ...(settings.acmeEab && { externalAccountBinding: settings.acmeEab }),
      backoffAttempts: this.polling.attempts,
      backoffMin: this.polling.minMs,
      backoffMax: this.polling.maxMs,
    });
    await register(client, settings);
    const accountUrl = client.getAccountUrl();
    if (accountUrl !== account.account_url) await setAcmeAccountUrl(store, directoryUrl, accountUrl);
    return client;
  }
}

/**
 * Finds the key's account at the CA, or creates it. acme-client's createAccount "updates" an
 * account that exists with the creation's fields, which strict CAs refuse as an empty update;
 * asking with onlyReturnExisting first makes its follow-up a plain read.
 */
async function register(client: acme.Client, settings: CertificateSettings): Promise<void> {
  try {
    await client.createAccount({ onlyReturnExisting: true });
  } catch {
    // No such account (or the CA is unreachable, which the creation then reports).
    await client.createAccount({ termsOfServiceAgreed: true, ...(settings.acmeEmail && { contact: [`mailto:${settings.acmeEmail}`] }) });
  }
}

/** The name an authorization is for, as ordered (`*.example.com` for a wildcard's). */
function identifierName(authz: acme.Authorization): string {
  return authz.wildcard ? `*.${authz.identifier.value}` : authz.identifier.value;
}

/** A new private key as PKCS#8 PEM: RSA 2048 or ECDSA P-256, as CAs take for TLS. */
async function newKey(type: 'rsa' | 'ecdsa'): Promise<string> {
  const { privateKey } = type === 'rsa' ? await generate('rsa', { modulusLength: 2048 }) : await generate('ec', { namedCurve: 'P-256' });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
}
