// pino: JSON lines, pretty only on a terminal. Secrets never reach a log line: request headers
// are not logged at all, and token-like fields are redacted should one ever be passed.
import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.js';

export function createLogger(level: LogLevel, destination: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout): Logger {
  const options = {
    level,
    redact: { paths: ['token', '*.token', 'secret', '*.secret', 'authorization', '*.authorization', 'req.headers'], censor: '[redacted]' },
  };
  if (destination.isTTY && destination === process.stdout) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' } } });
  }
  return pino(options, destination);
}
