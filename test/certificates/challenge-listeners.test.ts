// The two listeners that answer the CA, on both stores: each serves what a certificate job
// published in the store (so any instance answers for any other), nothing expired, and nothing
// outside its business.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { DOMAIN_DEFAULTS } from '../../src/config.js';
import { newId } from '../../src/core/ids.js';
import { createAccount } from '../../src/db/accounts.js';
import { publishChallenge, withdrawChallenges } from '../../src/db/acme.js';
import { scopedTx } from '../../src/db/scoped.js';
import { DnsLookupError, createResolver } from '../../src/lib/dns/resolver.js';
import { NO_MANAGEMENT } from '../../src/certificates/certificate-management.js';
import { startAuthoritativeDns } from '../../src/certificates/dns-responder.js';
import { startHttp01Responder } from '../../src/certificates/http01-responder.js';
import { reversedName } from '../../src/resources/reserved-domains/domain-names.js';
import { freshStore, storeKinds } from '../helpers/harness.js';

const log = pino({ level: 'silent' });
const soon = () => new Date(Date.now() + 60_000);

for (const kind of storeKinds()) {
  describe(`challenge listeners [${kind}]`, () => {
    let fresh: Awaited<ReturnType<typeof freshStore>>;
    before(async () => {
      fresh = await freshStore(kind);
    });
    after(async () => {
      await fresh?.dispose();
    });

    async function newAccount(name: string): Promise<string> {
      const accountId = newId('acct');
      await createAccount(fresh.store, { id: accountId, name, created_at: new Date().toISOString() }, async () => undefined);
      return accountId;
    }

    /** An agent ingress written straight to the store, as one written before the API checked nesting may be. */
    async function insertIngress(accountId: string, domain: string): Promise<string> {
      const id = newId('agin');
      await scopedTx(fresh.store, { accountId }, (db) =>
        db.insert('agent_ingresses', {
          id,
          description: '',
          metadata: '',
          created_at: new Date().toISOString(),
          domain,
          domain_reversed: reversedName(domain),
          certificate_id: null,
          ...NO_MANAGEMENT,
        }),
      );
      return id;
    }

    it('the HTTP-01 responder serves a published key authorization, and 404 for an unknown, expired or withdrawn one', async () => {
      const responder = await startHttp01Responder({ store: fresh.store, host: '127.0.0.1', port: 0, log });
      try {
        const url = (token: string) => `http://127.0.0.1:${responder.port}/.well-known/acme-challenge/${token}`;
        const id = await publishChallenge(fresh.store, { type: 'http-01', name: 'tok_1', value: 'tok_1.thumb', subjectId: 'rd_x', expiresAt: soon() });
        await publishChallenge(fresh.store, { type: 'http-01', name: 'tok_old', value: 'old', subjectId: 'rd_x', expiresAt: new Date(Date.now() - 1) });
        const ok = await fetch(url('tok_1'));
        assert.equal(ok.status, 200);
        assert.equal(await ok.text(), 'tok_1.thumb');
        assert.equal((await fetch(url('tok_old'))).status, 404, 'expired');
        assert.equal((await fetch(url('nope'))).status, 404);
        assert.equal((await fetch(`http://127.0.0.1:${responder.port}/api_keys`)).status, 404, 'nothing else is served');
        assert.equal((await fetch(url('tok_1'), { method: 'POST', body: 'x' })).status, 405);
        await withdrawChallenges(fresh.store, [id], new Date());
        assert.equal((await fetch(url('tok_1'))).status, 404, 'withdrawn');
      } finally {
        await responder.close();
      }
    });

    it('the DNS server answers challenge TXT records in the ACME zone and in delegated agent ingress domains, with their NS, and refuses the rest', async () => {
      const ingressDomain = `ing-${Date.now()}.example.test`;
      const accountId = await newAccount('dns');
      const ingressId = await insertIngress(accountId, ingressDomain);
      const server = await startAuthoritativeDns({ store: fresh.store, host: '127.0.0.1', port: 0, domains: DOMAIN_DEFAULTS, log });
      try {
        const dns = createResolver({ server: `127.0.0.1:${server.port}`, timeoutMs: 1000, tries: 1 });
        const acmeName = `abc.def.${DOMAIN_DEFAULTS.acmeChallengeZone}`;
        await publishChallenge(fresh.store, { type: 'dns-01', name: acmeName, value: 'digest-1', subjectId: 'rd_w', expiresAt: soon() });
        await publishChallenge(fresh.store, { type: 'dns-01', name: acmeName, value: 'digest-2', subjectId: 'rd_w', expiresAt: soon() });
        const regional = `_acme-challenge.tunnel.us.${ingressDomain}`;
        await publishChallenge(fresh.store, { type: 'dns-01', name: regional, value: 'digest-3', subjectId: ingressId, expiresAt: soon() });
        assert.deepEqual((await dns.txt(acmeName)).sort(), ['digest-1', 'digest-2'], 'a wildcard and its base share one name');
        assert.deepEqual(await dns.txt(regional), ['digest-3']);
        assert.deepEqual(await dns.txt(`other.${DOMAIN_DEFAULTS.acmeChallengeZone}`), []);
        assert.deepEqual((await dns.ns(ingressDomain)).sort(), ['ns1.edgeplane.app', 'ns2.edgeplane.app']);
        await assert.rejects(dns.txt('_acme-challenge.not-delegated.example.test'), (e: unknown) => e instanceof DnsLookupError && e.code === 'EREFUSED');
      } finally {
        await server.close();
      }
    });

    it("answers an agent ingress domain for its account only: another account's ingress nested inside it is no zone and proves nothing there", async () => {
      const outer = `victim-${Date.now()}.example.test`;
      const owner = await newAccount('owner');
      const intruder = await newAccount('intruder');
      const ownerIngress = await insertIngress(owner, outer);
      const ownNested = `own.${outer}`;
      const ownNestedIngress = await insertIngress(owner, ownNested);
      const foreignNested = `tunnel.us.${outer}`;
      const foreignIngress = await insertIngress(intruder, foreignNested);
      const server = await startAuthoritativeDns({ store: fresh.store, host: '127.0.0.1', port: 0, domains: DOMAIN_DEFAULTS, log });
      try {
        const dns = createResolver({ server: `127.0.0.1:${server.port}`, timeoutMs: 1000, tries: 1 });
        const challenge = (name: string, value: string, subjectId: string) =>
          publishChallenge(fresh.store, { type: 'dns-01', name, value, subjectId, expiresAt: soon() });
        await challenge(`_acme-challenge.tunnel.us.${foreignNested}`, 'intruder-digest', foreignIngress);
        // The nested ingress's regional name is tunnel.us.tunnel.us.<outer>, but its account could have
        // a challenge at the owner's own regional name too.
        await challenge(`_acme-challenge.tunnel.us.${outer}`, 'intruder-digest', foreignIngress);
        await challenge(`_acme-challenge.tunnel.us.${outer}`, 'owner-digest', ownerIngress);
        await challenge(`_acme-challenge.tunnel.us.${ownNested}`, 'own-nested-digest', ownNestedIngress);

        assert.deepEqual(await dns.txt(`_acme-challenge.tunnel.us.${foreignNested}`), [], "the other account's challenge is not served");
        assert.deepEqual(await dns.ns(foreignNested), [], 'its domain is no zone apex');
        assert.deepEqual(await dns.txt(`_acme-challenge.tunnel.us.${outer}`), ['owner-digest'], "only the owner's challenge at a name of its own");
        assert.deepEqual(await dns.txt(`_acme-challenge.tunnel.us.${ownNested}`), ['own-nested-digest'], "the account's own nested ingress is answered");
        assert.deepEqual((await dns.ns(ownNested)).sort(), ['ns1.edgeplane.app', 'ns2.edgeplane.app']);
      } finally {
        await server.close();
      }
    });
  });
}
