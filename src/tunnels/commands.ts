// The commands the API sends to an agent (Restart, Stop, Update): a stream of the command's type,
// the command's JSON, and the agent's reply, `{}` (it will) or `{"Error": "…"}`, read within a
// timeout. The agent reads a command as soon as it parses, so no FIN is needed after it.
import { AgentProtoError, JsonObjectReader } from '../lib/agent-proto/json.js';
import { decodeCommandResp, encodeRestart, encodeStop, encodeUpdate, StreamType } from '../lib/agent-proto/messages.js';
import { encodeStreamType } from '../lib/agent-proto/streams.js';
import type { CommandOutcome, SessionCommand, SessionCommands } from '../core/live-agents.js';
import type { AgentSessionRegistry } from './registry.js';

const COMMAND_TIMEOUT_MS = 10_000;

function encodeCommand(command: SessionCommand): { type: number; json: string } {
  switch (command.kind) {
    case 'restart':
      return { type: StreamType.restart, json: encodeRestart() };
    case 'stop':
      return { type: StreamType.stop, json: encodeStop() };
    case 'update':
      return { type: StreamType.update, json: encodeUpdate({ version: command.version, permitMajorVersion: command.permitMajorVersion }) };
  }
}

/** Sends commands to the sessions of this process's registry. */
export function sessionCommands(registry: AgentSessionRegistry, timeoutMs = COMMAND_TIMEOUT_MS): SessionCommands {
  return {
    send(sessionId, command) {
      const handle = registry.handleOf(sessionId);
      if (!handle) return Promise.resolve({ outcome: 'not_here' });
      const unsupported = registry.infoOf(sessionId)?.unsupported?.[command.kind];
      if (unsupported) return Promise.resolve({ outcome: 'refused', error: unsupported });
      return new Promise<CommandOutcome>((resolve) => {
        let stream: ReturnType<typeof handle.open>;
        try {
          stream = handle.open();
        } catch (err) {
          resolve({ outcome: 'failed', reason: err instanceof Error ? err.message : String(err) });
          return;
        }
        const reader = new JsonObjectReader('the reply to a command');
        let settled = false;
        const done = (outcome: CommandOutcome): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          stream.destroy();
          resolve(outcome);
        };
        const timer = setTimeout(() => done({ outcome: 'failed', reason: `the agent did not answer within ${timeoutMs / 1000} s` }), timeoutMs);
        stream.on('data', (chunk: Buffer) => {
          try {
            const complete = reader.push(chunk);
            if (!complete) return;
            const reply = decodeCommandResp(complete.value);
            done(reply.error === undefined || reply.error === '' ? { outcome: 'sent' } : { outcome: 'refused', error: reply.error });
          } catch (err) {
            done({ outcome: 'failed', reason: err instanceof AgentProtoError ? `the agent's reply was malformed: ${err.message}` : String(err) });
          }
        });
        // Stop and Restart end the session: the agent may hang up without a reply.
        stream.on('close', () =>
          done(command.kind === 'update' ? { outcome: 'failed', reason: 'the session ended before the agent answered' } : { outcome: 'sent' }),
        );
        stream.on('error', () => {});
        const { type, json } = encodeCommand(command);
        stream.write(Buffer.concat([encodeStreamType(type), Buffer.from(json)]));
      });
    },
  };
}
