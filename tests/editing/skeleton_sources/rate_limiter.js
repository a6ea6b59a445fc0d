'use strict';

/**
 * Token-bucket rate limiting middleware for an HTTP API.
 *
 * Buckets are kept per client key (API key or IP address) in an in-memory store with an LRU
 * bound, or in Redis when a client is passed in. Responses carry the usual RateLimit headers.
 */

const crypto = require('node:crypto');
const { EventEmitter } = require('node:events');
const { performance } = require('node:perf_hooks');

const DEFAULT_OPTIONS = {
  capacity: 60,
  refillPerSecond: 1,
  maxKeys: 10000,
  keyHeader: 'x-api-key',
  trustProxy: false,
  exempt: [],
};

class RateLimitError extends Error {
  constructor(key, retryAfterSeconds) {
    super(`rate limit exceeded for ${key}`);
    this.name = 'RateLimitError';
    this.status = 429;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

class MemoryStore {
  constructor(maxKeys) {
    this.maxKeys = maxKeys;
    this.buckets = new Map();
  }

  get(key) {
    const bucket = this.buckets.get(key);
    if (bucket === undefined) {
      return undefined;
    }
    // Re-insert so that Map iteration order is least recently used first.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    return bucket;
  }

  set(key, bucket) {
    if (this.buckets.has(key)) {
      this.buckets.delete(key);
    } else if (this.buckets.size >= this.maxKeys) {
      const oldest = this.buckets.keys().next().value;
      this.buckets.delete(oldest);
    }
    this.buckets.set(key, bucket);
  }

  size() {
    return this.buckets.size;
  }

  clear() {
    this.buckets.clear();
  }
}

class RedisStore {
  constructor(client, prefix = 'ratelimit:') {
    this.client = client;
    this.prefix = prefix;
  }

  async get(key) {
    const raw = await this.client.get(this.prefix + key);
    if (raw === null) {
      return undefined;
    }
    try {
      return JSON.parse(raw);
    } catch (error) {
      return undefined;
    }
  }

  async set(key, bucket) {
    const ttlSeconds = Math.ceil(bucket.capacity / bucket.refillPerSecond) + 1;
    await this.client.set(this.prefix + key, JSON.stringify(bucket), { EX: ttlSeconds });
  }
}

class TokenBucketLimiter extends EventEmitter {
  constructor(options = {}) {
    super();
    this.options = { ...DEFAULT_OPTIONS, ...options };
    this.store = options.redis
      ? new RedisStore(options.redis)
      : new MemoryStore(this.options.maxKeys);
    this.now = options.now || (() => performance.timeOrigin + performance.now());
  }

  keyFor(request) {
    const header = request.headers[this.options.keyHeader];
    if (typeof header === 'string' && header.length > 0) {
      return 'key:' + crypto.createHash('sha256').update(header).digest('hex').slice(0, 16);
    }
    if (this.options.trustProxy) {
      const forwarded = request.headers['x-forwarded-for'];
      if (typeof forwarded === 'string') {
        return 'ip:' + forwarded.split(',')[0].trim();
      }
    }
    return 'ip:' + (request.socket && request.socket.remoteAddress);
  }

  isExempt(request) {
    return this.options.exempt.some((pattern) =>
      pattern instanceof RegExp ? pattern.test(request.url) : request.url.startsWith(pattern),
    );
  }

  refill(bucket, nowMs) {
    const elapsedSeconds = Math.max(0, nowMs - bucket.updatedAt) / 1000;
    const tokens = Math.min(
      bucket.capacity,
      bucket.tokens + elapsedSeconds * bucket.refillPerSecond,
    );
    return { ...bucket, tokens, updatedAt: nowMs };
  }

  async take(key, cost = 1) {
    const nowMs = this.now();
    let bucket = await this.store.get(key);
    if (bucket === undefined) {
      bucket = {
        capacity: this.options.capacity,
        refillPerSecond: this.options.refillPerSecond,
        tokens: this.options.capacity,
        updatedAt: nowMs,
      };
    }
    bucket = this.refill(bucket, nowMs);
    const allowed = bucket.tokens >= cost;
    if (allowed) {
      bucket.tokens -= cost;
    } else {
      this.emit('limited', key, bucket);
    }
    await this.store.set(key, bucket);
    const missing = Math.max(0, cost - bucket.tokens);
    return {
      allowed,
      remaining: Math.floor(bucket.tokens),
      retryAfterSeconds: allowed ? 0 : Math.ceil(missing / bucket.refillPerSecond),
      resetSeconds: Math.ceil((bucket.capacity - bucket.tokens) / bucket.refillPerSecond),
    };
  }

  middleware() {
    return async (request, response, next) => {
      if (this.isExempt(request)) {
        return next();
      }
      const key = this.keyFor(request);
      let decision;
      try {
        decision = await this.take(key);
      } catch (error) {
        // The store is down: fail open rather than take the API down with it.
        this.emit('error', error);
        return next();
      }
      response.setHeader('RateLimit-Limit', String(this.options.capacity));
      response.setHeader('RateLimit-Remaining', String(decision.remaining));
      response.setHeader('RateLimit-Reset', String(decision.resetSeconds));
      if (!decision.allowed) {
        response.setHeader('Retry-After', String(decision.retryAfterSeconds));
        return next(new RateLimitError(key, decision.retryAfterSeconds));
      }
      return next();
    };
  }
}

function errorHandler(error, request, response, next) {
  if (!(error instanceof RateLimitError)) {
    return next(error);
  }
  response.statusCode = error.status;
  response.setHeader('Content-Type', 'application/json');
  response.end(
    JSON.stringify({
      error: 'too_many_requests',
      message: error.message,
      retryAfterSeconds: error.retryAfterSeconds,
    }),
  );
}

function createLimiter(options) {
  const limiter = new TokenBucketLimiter(options);
  return { limiter, middleware: limiter.middleware(), errorHandler };
}

module.exports = {
  DEFAULT_OPTIONS,
  MemoryStore,
  RateLimitError,
  RedisStore,
  TokenBucketLimiter,
  createLimiter,
  errorHandler,
};
