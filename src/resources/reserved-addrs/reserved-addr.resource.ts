// Reserved TCP addresses. The caller never chooses one: a create takes the lowest free port of
// the operator's pool (EDGEPLANE_TCP_ADDRESSES), inside the transaction and under one lock
// across accounts, and a unique index on `addr` makes two accounts holding one address
// impossible whatever happens. An address an edge serves cannot be deleted.
import { sql } from 'kysely';
import type { DomainSettings } from '../../config.js';
import { errors } from '../../core/errors.js';
import { describedChanges, describedColumns, describedResponse } from '../../core/schema.js';
import { defineResource } from '../../crud/definition.js';
import { readAcrossAccountsIn, type CrossAccountReader } from '../../db/cross-account.js';
import type { ScopedDb } from '../../db/scoped.js';
import type { ReservedAddrsTable } from './reserved-addr.table.js';
import { endpointConfigurationErrors } from '../endpoint-configurations/endpoint-configuration.errors.js';
import { reservedAddrCatalogue, reservedAddrErrors } from './reserved-addr.errors.js';
import { ReservedAddr, ReservedAddrCreate, ReservedAddrUpdate } from './reserved-addr.schema.js';

/**
 * The lowest port of `host` from `from` to `to` that no account has reserved, or undefined when
 * every one is taken. Across accounts, revealing only a number; call it under
 * `serializeAcrossAccounts`, so that two allocations never pick the same port.
 */
async function freePort(across: CrossAccountReader, db: ScopedDb, host: string, from: number, to: number): Promise<number | undefined> {
  return readAcrossAccountsIn(across, db, async (executor) => {
    const first = await executor.selectFrom('reserved_addrs').select('port').where('host', '=', host).where('port', '=', from).executeTakeFirst();
    if (!first) return from;
    // The lowest taken port whose next port is free: the first gap above `from`.
    const gap = (await executor
      .selectFrom('reserved_addrs as a')
      .select(sql<number>`min(a.port) + 1`.as('port'))
      .where('a.host', '=', host)
      .where('a.port', '>=', from)
      .where('a.port', '<', to)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('reserved_addrs as b')
              .select('b.port')
              .whereRef('b.host', '=', 'a.host')
              .where(sql<boolean>`b.port = a.port + 1`),
          ),
        ),
      )
      .executeTakeFirst()) as { port: number | string | null } | undefined;
    return gap?.port === null || gap?.port === undefined ? undefined : Number(gap.port);
  });
}

/** `across`: for the free port of the pool, which every account shares. */
export function reservedAddrDefinition(settings: DomainSettings, across: CrossAccountReader) {
  const defaultRegion = settings.regions.includes('us') ? 'us' : settings.regions[0]!;
  const pool = settings.tcpAddresses.map((r) => `${r.host}:${r.from}-${r.to}`).join(', ');
  return defineResource({
    kind: 'reserved_addr',
    title: 'reserved address',
    errors: reservedAddrCatalogue,
    prefix: 'ra',
    path: '/reserved_addrs',
    listKey: 'reserved_addrs',
    table: 'reserved_addrs',
    schemas: { resource: ReservedAddr, create: ReservedAddrCreate, update: ReservedAddrUpdate },
    immutable: ['region', 'addr'],
    references: [
      {
        in: 'column',
        column: 'endpoint_configuration_id',
        kinds: ['endpoint_configuration'],
        notFound: (id) => endpointConfigurationErrors.endpointConfigurationNotFound({ field: 'endpoint_configuration_id', id }),
        onDelete: 'restrict',
      },
    ],
    inUse: (id, edges) => reservedAddrErrors.reservedAddrInUse({ id, edges }),

    prepare(_ctx, body) {
      // The official Python client sends "" for a region it was not given.
      const region = body.region || defaultRegion;
      if (!settings.regions.includes(region)) throw errors.invalidRegion({ value: region, regions: settings.regions });
      // The address is chosen in the transaction (allocate).
      return { row: { ...describedColumns(body), region, addr: '', host: '', port: 0, endpoint_configuration_id: null } };
    },

    patch: (_ctx, body): Partial<ReservedAddrsTable> => ({
      ...describedChanges(body),
      ...(body.endpoint_configuration_id != null && { endpoint_configuration_id: body.endpoint_configuration_id }),
    }),

    detach: { endpoint_configuration: (row) => (row.endpoint_configuration_id === null ? {} : { endpoint_configuration_id: null }) },

    hooks: {
      async allocate(db) {
        await db.serializeAcrossAccounts('reserved_addrs');
        for (const range of settings.tcpAddresses) {
          const port = await freePort(across, db, range.host, range.from, range.to);
          if (port !== undefined) return { addr: `${range.host}:${port}`, host: range.host, port };
        }
        throw reservedAddrErrors.addressPoolExhausted({ pool });
      },
      async beforeUpdate(db, _ctx, current, changes) {
        const id = changes.endpoint_configuration_id;
        if (typeof id !== 'string') return;
        const configuration = await db.find('endpoint_configurations', id);
        if (configuration && configuration.type !== 'tcp')
          throw endpointConfigurationErrors.endpointConfigurationType({ field: 'endpoint_configuration_id', id, type: configuration.type, expected: 'tcp' });
        // An edge serves only addresses without a configuration; the row is locked, so no edge claims it meanwhile.
        const served = await db.select('tcp_edge_hostports', { reserved_addr_id: current.id });
        if (served.length > 0) throw reservedAddrErrors.reservedAddrInUse({ id: current.id, edges: served.map((s) => s.tcp_edge_id) });
        // Nor does a TCP cloud endpoint.
        const endpoints = await db.select('cloud_endpoints', { tcp_addr_id: current.id });
        if (endpoints.length > 0) throw reservedAddrErrors.reservedAddrInUse({ id: current.id, edges: endpoints.map((e) => e.id) });
      },
    },

    toApi: (row: ReservedAddrsTable, view) => ({
      ...describedResponse(row),
      addr: row.addr,
      region: row.region,
      endpoint_configuration: row.endpoint_configuration_id === null ? null : view.ref(row.endpoint_configuration_id),
    }),
  });
}
