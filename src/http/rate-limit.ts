// Per-account rate limits (EDGEPLANE_RATE_LIMIT requests a minute): every authenticated request
// counts against its account; past the limit it is refused with 429, Retry-After and its own
// error code, and every counted response says where the account stands (RateLimit-* headers).
//
// rate-limiter-flexible does the counting: in Redis when EDGEPLANE_REDIS_URL is set, so that all
// instances share one count, else in the process. Its insurance limiter counts in the process
// whenever Redis fails, so an outage of Redis loosens the limit to one per process for its
// duration and never turns into errors or waits: commands are not queued while Redis is away,
// and one that hangs gives up quickly. An account's minute starts with its first request counted
// in it (a window of its own, not the clock's minute).
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Config } from '../config.js';
import { errors } from '../core/errors.js';

const WINDOW_SECONDS = 60;
/** How long a start waits for Redis before counting on its own. */
const REDIS_CONNECT_WAIT_MS = 2000;
/** A Redis command that takes longer than this is given up, and the process counts instead. */
const REDIS_COMMAND_TIMEOUT_MS = 250;
/** At most one warning this often while Redis is failing. */
const REDIS_WARNING_INTERVAL_MS = 60_000;

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the account's window ends (its count starts again). */
  resetMs: number;
}

export interface RequestLimiter {
  readonly perMinute: number;
  /**
   * Resolves once Redis is connected, or has failed, or after a short wait (never rejects): a
   * server that starts counting before would count its first requests on its own.
   */
  ready(): Promise<void>;
  /** Counts one request of `key`. */
  take(key: string): Promise<LimitDecision>;
  close(): Promise<void>;
}

/** The limiter the settings ask for; undefined when the limit is off (0). */
export function createRequestLimiter(settings: Config['rateLimit'], log: Logger): RequestLimiter | undefined {
  const { perMinute, redisUrl } = settings;
  if (perMinute === 0) return undefined;
  const options = { points: perMinute, duration: WINDOW_SECONDS, keyPrefix: 'edgeplane:rate' };
  const local = new RateLimiterMemory(options);
  let redis: Redis | undefined;
  let limiter: RateLimiterMemory | RateLimiterRedis = local;
  if (redisUrl) {
    redis = new Redis(redisUrl, { enableOfflineQueue: false, commandTimeout: REDIS_COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 0, lazyConnect: false });
    let warnedAt = -Infinity;
    redis.on('error', (error: Error) => {
      if (Date.now() - warnedAt < REDIS_WARNING_INTERVAL_MS) return;
      warnedAt = Date.now();
      // The message, not the error: ioredis errors may carry the URL, and with it a password.
      log.warn({ reason: error.message.replace(/\/\/[^@\s]*@/g, '//***@') }, 'rate limits: Redis is failing; each process counts on its own until it is back');
    });
    limiter = new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: local });
  }
  const connected = redis
    ? new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, REDIS_CONNECT_WAIT_MS);
        timer.unref();
        const end = () => {
          clearTimeout(timer);
          resolve();
        };
        redis.once('ready', end);
        redis.once('error', end);
      })
    : Promise.resolve();
  return {
    perMinute,
    ready: () => connected,
    async take(key) {
      try {
        const res = await limiter.consume(key);
        return { allowed: true, limit: perMinute, remaining: res.remainingPoints, resetMs: res.msBeforeNext };
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return { allowed: false, limit: perMinute, remaining: 0, resetMs: rejection.msBeforeNext };
        // Both stores failed (the insurance limiter is in memory, so this is a bug): let it pass.
        log.error({ err: rejection }, 'rate limits: counting failed; the request is let through');
        return { allowed: true, limit: perMinute, remaining: perMinute, resetMs: WINDOW_SECONDS * 1000 };
      }
    },
    async close() {
      redis?.disconnect();
    },
  };
}

/**
 * Counts every request that authenticated (public routes, unknown paths and refused credentials
 * are not counted): registered after the protocol's hooks, which set `request.ctx`.
 */
export function registerRateLimit(app: FastifyInstance, limiter: RequestLimiter): void {
  app.addHook('onClose', () => limiter.close());
  app.addHook('onRequest', (request, reply, done) => {
    const accountId = request.ctx?.scope.accountId;
    if (accountId === undefined) return done();
    limiter.take(accountId).then((decision) => {
      const resetSeconds = Math.max(1, Math.ceil(decision.resetMs / 1000));
      reply.header('RateLimit-Limit', String(decision.limit));
      reply.header('RateLimit-Remaining', String(decision.remaining));
      reply.header('RateLimit-Reset', String(resetSeconds));
      reply.header('RateLimit-Policy', `${decision.limit};w=${WINDOW_SECONDS}`);
      done(decision.allowed ? undefined : errors.rateLimited({ limit: decision.limit, retryAfter: resetSeconds }));
    }, done);
  });
}
