// The ordered list of migrations. Names sort in the order they run.
import type { Migration, MigrationProvider } from 'kysely';
import type { Dialect } from '../dialects/dialect.js';
import { foundation } from './0001-foundation.js';
import { ipPolicies } from './0002-ip-policies.js';
import { backends } from './0003-backends.js';
import { ssh } from './0004-ssh.js';
import { joinTableAccounts } from './0005-join-table-accounts.js';
import { uniqueUserNames } from './0006-unique-user-names.js';
import { domains } from './0007-domains.js';
import { edges } from './0008-edges.js';
import { certificateAuthorities } from './0009-certificate-authorities.js';
import { tlsEdges } from './0010-tls-edges.js';
import { httpsEdges } from './0011-https-edges.js';
import { jobs } from './0012-jobs.js';
import { certificateAutomation } from './0013-certificate-automation.js';
import { idempotencyKeys } from './0014-idempotency-keys.js';
import { auditEvents } from './0015-audit-events.js';
import { idempotencyOutcome } from './0016-idempotency-outcome.js';
import { idempotencyCredential } from './0017-idempotency-credential.js';
import { agentIngressReversed } from './0018-agent-ingress-reversed.js';
import { credentials } from './0019-credentials.js';
import { liveAgents } from './0020-live-agents.js';
import { configRevisions } from './0021-config-revisions.js';
import { cloudEndpoints } from './0022-cloud-endpoints.js';
import { peerInstances } from './0023-peer-instances.js';
import { uniqueAccountNames } from './0024-unique-account-names.js';
import { sshAgents } from './0025-ssh-agents.js';

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return {
    async getMigrations(): Promise<Record<string, Migration>> {
      return {
        '0001-foundation': foundation(dialect),
        '0002-ip-policies': ipPolicies(dialect),
        '0003-backends': backends(dialect),
        '0004-ssh': ssh(dialect),
        '0005-join-table-accounts': joinTableAccounts(dialect),
        '0006-unique-user-names': uniqueUserNames(),
        '0007-domains': domains(dialect),
        '0008-edges': edges(dialect),
        '0009-certificate-authorities': certificateAuthorities(dialect),
        '0010-tls-edges': tlsEdges(dialect),
        '0011-https-edges': httpsEdges(dialect),
        '0012-jobs': jobs(dialect),
        '0013-certificate-automation': certificateAutomation(dialect),
        '0014-idempotency-keys': idempotencyKeys(dialect),
        '0015-audit-events': auditEvents(dialect),
        '0016-idempotency-outcome': idempotencyOutcome(dialect),
        '0017-idempotency-credential': idempotencyCredential(dialect),
        '0018-agent-ingress-reversed': agentIngressReversed(dialect),
        '0019-credentials': credentials(dialect),
        '0020-live-agents': liveAgents(dialect),
        '0021-config-revisions': configRevisions(dialect),
        '0022-cloud-endpoints': cloudEndpoints(dialect),
        '0023-peer-instances': peerInstances(dialect),
        '0024-unique-account-names': uniqueAccountNames(),
        '0025-ssh-agents': sshAgents(dialect),
      };
    },
  };
}
