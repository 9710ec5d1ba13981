// pino: JSON lines, pretty only on a terminal. Secrets never reach a log line: request headers
// are not logged at all, and token-like fields are redacted should one ever be passed.
//
// Lines go out through pino's own writer (sonic-boom), asynchronously and in batches: a line is
// appended to a buffer, written once the buffer holds WRITE_BATCH_BYTES or at the latest
// FLUSH_MS later, while the process goes on; so that under load one `write` carries the lines of
// many requests instead of one system call each. What is still buffered is written synchronously
// when the process exits. A request's own logger is made only when the request
// logs something (`requestLoggerFactory`): most log nothing but their one request line.
import { pino, type Bindings, type ChildLoggerOptions, type LevelWithSilentOrString, type Logger } from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import type { LogLevel } from './config.js';

/** About fifteen request lines. */
const WRITE_BATCH_BYTES = 4096;
/** The longest a line waits in the buffer when few are written. */
const FLUSH_MS = 100;

const REDACT = { paths: ['token', '*.token', 'secret', '*.secret', 'authorization', '*.authorization', 'req.headers'], censor: '[redacted]' };

/**
 * `destination`: a stream (the tests' collector), or a file descriptor or file path that pino's
 * writer appends to (standard output, fd 1, by default).
 */
export function createLogger(level: LogLevel, destination: NodeJS.WritableStream | number | string = 1): Logger {
  const options = { level, redact: REDACT };
  if (destination === 1 && process.stdout.isTTY) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' } } });
  }
  if (typeof destination === 'object') return pino(options, destination);
  return pino(options, pino.destination({ dest: destination, sync: false, minLength: WRITE_BATCH_BYTES, periodicFlush: FLUSH_MS }));
}

/**
 * A logger for lines whose fields are all named by our own code and none of which can hold a
 * secret (the request line): the same destination, level and bindings, without the redaction,
 * whose wildcard paths (`*.token`) pass every field of every line through the redactor. A
 * field of that name logged through it would not be redacted, so nothing else logs through it.
 */
export function unredactedLogger(logger: Logger): Logger {
  return logger.child({}, { redact: [] });
}

/**
 * A request's logger that makes its pino child (bound to the request's operation id) on the first
 * line it writes. Creating a pino child per request, as Fastify does by default, costs an object,
 * the bindings serialized to JSON and formatters rebuilt, for requests that mostly log nothing
 * through it. One class, so that every request's logger has the same shape.
 */
class RequestLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions | undefined,
  ) {}

  private get real(): Logger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }

  get level(): LevelWithSilentOrString {
    return (this.#child ?? this.parent).level;
  }

  set level(level: LevelWithSilentOrString) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.parent).isLevelEnabled(level);
  }

  fatal(...args: unknown[]): void {
    if (this.isLevelEnabled('fatal')) (this.real.fatal as (...a: unknown[]) => void)(...args);
  }

  error(...args: unknown[]): void {
    if (this.isLevelEnabled('error')) (this.real.error as (...a: unknown[]) => void)(...args);
  }

  warn(...args: unknown[]): void {
    if (this.isLevelEnabled('warn')) (this.real.warn as (...a: unknown[]) => void)(...args);
  }

  info(...args: unknown[]): void {
    if (this.isLevelEnabled('info')) (this.real.info as (...a: unknown[]) => void)(...args);
  }

  debug(...args: unknown[]): void {
    if (this.isLevelEnabled('debug')) (this.real.debug as (...a: unknown[]) => void)(...args);
  }

  trace(...args: unknown[]): void {
    if (this.isLevelEnabled('trace')) (this.real.trace as (...a: unknown[]) => void)(...args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: the request's logger, made lazily (RequestLogger). Fastify
 * passes no options unless a route sets a log level or serializers, which ours do not.
 */
export function requestLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  const hasOptions = options.level !== undefined || options.serializers !== undefined;
  // The app's logger is pino (buildApp's loggerInstance).
  return new RequestLogger(logger as Logger, bindings, hasOptions ? options : undefined) as unknown as FastifyBaseLogger;
}
