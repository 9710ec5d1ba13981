// The errors of the commands to tunnel sessions (restart, stop, update), which
// tunnel-session.commands.ts throws from the outcome the data plane gives (its SessionCommands).
import { entry, throwersOf } from '../../core/errors.js';

export const tunnelSessionCatalogue = {
  agentRefusedCommand: entry<{ command: string; id: string; error: string }>(
    8100,
    409,
    'The agent of the tunnel session refused the command (it does not support it, or cannot now); its answer is given.',
    (a) => `The agent of tunnel session ${a.id} refused to ${a.command}: ${a.error.slice(0, 300)}`,
  ),
  agentCommandFailed: entry<{ command: string; id: string; reason: string }>(
    8101,
    503,
    'The tunnel session ended, or its agent did not answer the command in time; retry, or list the sessions to see whether it is still online.',
    (a) => `The command to ${a.command} did not reach the agent of tunnel session ${a.id}: ${a.reason.slice(0, 300)}`,
    () => ({ 'Retry-After': '5' }),
  ),
  tooManyQueuedCommands: entry<{ id: string; max: number }>(
    8102,
    409,
    'The tunnel session already has the most commands that may wait for the instance that holds it; retry once they have run.',
    (a) => `Tunnel session ${a.id} already has ${a.max} commands waiting for the instance that holds it; retry in a few seconds.`,
  ),
} as const;

/** Error factories: `throw tunnelSessionErrors.agentRefusedCommand(…)`. */
export const tunnelSessionErrors = throwersOf(tunnelSessionCatalogue);
