// Every error the API can answer with, gathered from the catalogues that live beside the code that
// throws them: src/core/errors.ts for the errors that are no one kind's, each kind's own
// `<kind>.errors.ts` as its definition declares it (gathered by the registry, so a new kind adds
// no line here), and the parts edges and certificates are made of. It sits at the top of src
// because it must see core, resources, edge-config and certificates; only scripts/errors-doc.ts,
// which writes docs/errors.md from it, and the tests import it. test/contract/errors-doc.test.ts
// checks that every `*.errors.ts` in src is gathered.
import { certificateManagementCatalogue } from './certificates/certificate-management.errors.js';
import { pemCatalogue } from './certificates/pem.errors.js';
import { coreCatalogue, type Catalogue } from './core/errors.js';
import { hostportCatalogue } from './edge-config/hostports/hostport.errors.js';
import { edgeModuleCatalogue } from './edge-config/modules/edge-module.errors.js';
import { sharedValueCatalogue } from './edge-config/values/shared-value.errors.js';
import { trafficPolicyCatalogue } from './edge-config/traffic-policy/traffic-policy.errors.js';
import { kindCatalogues } from './resources/registry.js';

/** Every catalogue, by the name the load-time check gives it: a part's, or the kind that declares it. */
export const CATALOGUES: Readonly<Record<string, Catalogue>> = {
  core: coreCatalogue,
  certificateManagement: certificateManagementCatalogue,
  edgeModules: edgeModuleCatalogue,
  hostports: hostportCatalogue,
  pem: pemCatalogue,
  sharedValues: sharedValueCatalogue,
  trafficPolicy: trafficPolicyCatalogue,
  ...kindCatalogues(),
};

/** One error as the documentation shows it, with the catalogue it comes from. */
export interface CatalogueError {
  name: string;
  catalogue: string;
  code: number;
  status: number;
  meaning: string;
}

/**
 * The errors of the catalogues, in one list. Throws if two entries share a code (a client could not
 * tell them apart) or a name (`errors.x` would not say which one is meant when read or searched).
 */
export function gatherCatalogues(catalogues: Readonly<Record<string, Catalogue>>): CatalogueError[] {
  const gathered: CatalogueError[] = [];
  const byCode = new Map<number, CatalogueError>();
  const byName = new Map<string, CatalogueError>();
  for (const [catalogue, entries] of Object.entries(catalogues)) {
    for (const [name, { code, status, meaning }] of Object.entries(entries)) {
      const error = { name, catalogue, code, status, meaning };
      const sameCode = byCode.get(code);
      if (sameCode) throw new Error(`ERR_EP_${code} is the code of both ${where(sameCode)} and ${where(error)}; give each error its own code`);
      const sameName = byName.get(name);
      if (sameName) throw new Error(`${where(sameName)} and ${where(error)} have the same name; give each error its own name`);
      byCode.set(code, error);
      byName.set(name, error);
      gathered.push(error);
    }
  }
  return gathered;
}

const where = (error: CatalogueError) => `${error.catalogue}.${error.name}`;

/** Every error the API can answer with; gathering it at load time fails if two share a code or a name. */
export const ERROR_CATALOGUE: readonly CatalogueError[] = gatherCatalogues(CATALOGUES);
