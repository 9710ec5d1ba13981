// The errors of credentials (agent authtokens): their ACL rules, as credential-acl.ts reads them,
// and who may own, change or delete one (credential.resource.ts).
import { entry, throwersOf } from '../../core/errors.js';

export const credentialCatalogue = {
  invalidAclRule: entry<{ index: number; rule: string }>(
    600,
    400,
    "An ACL rule is neither '*' nor 'bind:' followed by a domain, a wildcard domain or a label.",
    (a) =>
      `acl[${a.index}] '${a.rule}' is not an ACL rule: a rule is '*', or 'bind:' followed by a domain (app.example.com), a wildcard domain (*.example.com), a label (key=value) or '*'.`,
  ),
  invalidAclDomain: entry<{ index: number; rule: string; problem: string }>(
    601,
    400,
    "The domain of an ACL rule 'bind:<domain>' is not a valid DNS name.",
    (a) => `acl[${a.index}] '${a.rule}' names no valid domain: ${a.problem}.`,
  ),
  invalidAclLabel: entry<{ index: number; rule: string; problem: string }>(
    602,
    400,
    "The label of an ACL rule 'bind:<key>=<value>' is not a valid label.",
    (a) => `acl[${a.index}] '${a.rule}' names no valid label: ${a.problem}.`,
  ),
  tooManyAclRules: entry<{ count: number; max: number }>(
    603,
    400,
    'A credential has more ACL rules than allowed.',
    (a) => `acl has ${a.count} rules; a credential has at most ${a.max}.`,
  ),
  credentialOwnerNotAllowed: entry(
    604,
    403,
    'Only admins may create a credential owned by another user or bot.',
    () => 'Only admins may create a credential owned by another user or bot; omit owner_id to own the credential yourself.',
  ),
  notCredentialOwner: entry<{ id: string }>(
    607,
    403,
    'Only admins may change or delete a credential owned by another user or bot.',
    (a) => `Credential ${a.id} is owned by another user or bot; only its owner or an admin may change or delete it.`,
  ),
} as const;

/** Error factories: `throw credentialErrors.invalidAclRule(…)`. */
export const credentialErrors = throwersOf(credentialCatalogue);
