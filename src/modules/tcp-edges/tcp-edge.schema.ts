import { Type } from '@sinclair/typebox';
import { Body, DescribedCreate, DescribedFields, DescribedPatch, Nullable, Patch } from '../../core/schema.js';
import { moduleFields, moduleRequestFields } from '../../crud/modules.js';
import { TCP_EDGE_MODULES } from './tcp-edge.modules.js';

export const MAX_HOSTPORTS = 10;

const Hostports = Type.Array(Type.String({ maxLength: 300 }), {
  description: `reserved addresses (host:port) of the account; at most ${MAX_HOSTPORTS}`,
});

export const TcpEdge = Type.Object(
  {
    ...DescribedFields('edgtcp'),
    hostports: Nullable(Type.Array(Type.String(), { description: 'the reserved addresses served; null when none' })),
    ...moduleFields(TCP_EDGE_MODULES),
  },
  { description: 'TCP edge' },
);

export const TcpEdgeCreate = Body({ ...DescribedCreate, hostports: Type.Optional(Nullable(Hostports)), ...moduleRequestFields(TCP_EDGE_MODULES) });
export const TcpEdgeUpdate = Body({ ...DescribedPatch, hostports: Patch(Hostports), ...moduleRequestFields(TCP_EDGE_MODULES) });
