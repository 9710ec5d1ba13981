// The tunnel session as the API shows it: an agent connected to some instance, while its
// instance's lease on the row holds. Sessions are made by agents, never through the API, so the
// create and update bodies are empty and never routed; the commands take their own bodies.
import { Type } from '@sinclair/typebox';
import { Body, BoundedString, IdString, Ref, Timestamp, Uri } from '../../core/schema.js';

export const TunnelSession = Type.Object(
  {
    id: Type.String({ description: 'ts_…' }),
    uri: Uri,
    agent_version: Type.String({ description: 'the version of the agent, as it reports it' }),
    credential: Ref,
    ip: Type.String({ description: 'the address the agent connected from' }),
    metadata: Type.String({ description: 'what the agent was configured to say of itself' }),
    os: Type.String({ description: 'the operating system the agent runs on, as it reports it' }),
    region: Type.String({ description: 'the region of the instance that holds the session' }),
    started_at: Timestamp,
    transport: Type.String({ description: 'how the agent connected (`ngrok/tls` for the agent SDKs, `ssh` for ssh -R)' }),
  },
  { description: 'tunnel session: an agent connected now' },
);

export const NoTunnelSessionBody = Body({});

const PathId = Type.Optional(IdString('ts', 'the tunnel session; the path names it, and any other is refused'));

/** The body of restart and stop: nothing, or the id the official clients send. */
export const TunnelSessionCommandBody = Body({ id: PathId });

/** The body of update: the published operation sends only the id; the agent's Update message takes the rest. */
export const TunnelSessionUpdateBody = Body({
  id: PathId,
  version: Type.Optional(BoundedString(64, { description: 'the version to update to; empty or absent: the newest the agent may take' })),
  permit_major_version: Type.Optional(Type.Boolean({ description: 'whether the agent may update to a new major version (default false)' })),
});
