// The errors of reserved addresses: a full address pool, and deleting one an edge still serves.
import { entry, shortList, throwersOf } from '../../core/errors.js';

export const reservedAddrCatalogue = {
  addressPoolExhausted: entry<{ pool: string }>(
    508,
    409,
    "No address of the operator's TCP address pool is free.",
    (a) => `every TCP address of the pool (${a.pool}) is reserved; delete a reserved address, or ask the operator to widen EDGEPLANE_TCP_ADDRESSES.`,
  ),
  reservedAddrInUse: entry<{ id: string; edges: readonly string[] }>(
    520,
    409,
    'The reserved address is still served by an edge or a cloud endpoint.',
    (a) => `reserved address ${a.id} is served by ${shortList(a.edges)}; remove it from the edge's hostports, or delete the edge or cloud endpoint, first.`,
  ),
} as const;

/** Error factories: `throw reservedAddrErrors.addressPoolExhausted(…)`. */
export const reservedAddrErrors = throwersOf(reservedAddrCatalogue);
