/**
 * An append-only event store with optimistic concurrency, snapshots and projections.
 * Storage is pluggable; the in-memory adapter is what the tests and the dev server use.
 */

import { randomUUID } from "node:crypto";
import type { Logger } from "./logger";
import { Clock, systemClock } from "./clock";

export type StreamId = string & { readonly __brand: "StreamId" };

export interface EventEnvelope<TPayload = unknown> {
  id: string;
  streamId: StreamId;
  type: string;
  version: number;
  recordedAt: Date;
  payload: TPayload;
  metadata?: Record<string, string>;
}

export interface Snapshot<TState> {
  streamId: StreamId;
  version: number;
  state: TState;
  takenAt: Date;
}

export interface StorageAdapter {
  read(streamId: StreamId, fromVersion: number): Promise<EventEnvelope[]>;
  append(streamId: StreamId, events: EventEnvelope[], expectedVersion: number): Promise<void>;
  readAll(fromPosition: number, limit: number): Promise<EventEnvelope[]>;
  loadSnapshot<TState>(streamId: StreamId): Promise<Snapshot<TState> | undefined>;
  saveSnapshot<TState>(snapshot: Snapshot<TState>): Promise<void>;
}

export enum ConflictPolicy {
  Reject = "reject",
  Retry = "retry",
}

export class ConcurrencyError extends Error {
  constructor(
    public readonly streamId: StreamId,
    public readonly expected: number,
    public readonly actual: number,
  ) {
    super(`stream ${streamId}: expected version ${expected}, found ${actual}`);
    this.name = "ConcurrencyError";
  }
}

export function streamId(category: string, id: string): StreamId {
  if (!/^[a-z][a-z0-9-]*$/.test(category)) {
    throw new Error(`bad stream category: ${category}`);
  }
  return `${category}-${id}` as StreamId;
}

export class InMemoryStorage implements StorageAdapter {
  private readonly streams = new Map<StreamId, EventEnvelope[]>();
  private readonly log: EventEnvelope[] = [];
  private readonly snapshots = new Map<StreamId, Snapshot<unknown>>();

  async read(streamId: StreamId, fromVersion: number): Promise<EventEnvelope[]> {
    const events = this.streams.get(streamId) ?? [];
    return events.filter((event) => event.version >= fromVersion);
  }

  async append(streamId: StreamId, events: EventEnvelope[], expectedVersion: number): Promise<void> {
    const existing = this.streams.get(streamId) ?? [];
    const actual = existing.length;
    if (actual !== expectedVersion) {
      throw new ConcurrencyError(streamId, expectedVersion, actual);
    }
    this.streams.set(streamId, [...existing, ...events]);
    this.log.push(...events);
  }

  async readAll(fromPosition: number, limit: number): Promise<EventEnvelope[]> {
    return this.log.slice(fromPosition, fromPosition + limit);
  }

  async loadSnapshot<TState>(streamId: StreamId): Promise<Snapshot<TState> | undefined> {
    return this.snapshots.get(streamId) as Snapshot<TState> | undefined;
  }

  async saveSnapshot<TState>(snapshot: Snapshot<TState>): Promise<void> {
    this.snapshots.set(snapshot.streamId, snapshot);
  }
}

export type Reducer<TState> = (state: TState, event: EventEnvelope) => TState;

export interface AggregateDefinition<TState> {
  category: string;
  initialState: () => TState;
  reduce: Reducer<TState>;
  snapshotEvery?: number;
}

export interface EventStoreOptions {
  storage: StorageAdapter;
  clock?: Clock;
  logger?: Logger;
  conflictPolicy?: ConflictPolicy;
  maxRetries?: number;
}

export class EventStore {
  private readonly storage: StorageAdapter;
  private readonly clock: Clock;
  private readonly logger?: Logger;
  private readonly conflictPolicy: ConflictPolicy;
  private readonly maxRetries: number;
  private readonly subscribers = new Set<(event: EventEnvelope) => void>();

  constructor(options: EventStoreOptions) {
    this.storage = options.storage;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger;
    this.conflictPolicy = options.conflictPolicy ?? ConflictPolicy.Reject;
    this.maxRetries = options.maxRetries ?? 3;
  }

  subscribe(listener: (event: EventEnvelope) => void): () => void {
    this.subscribers.add(listener);
    return () => this.subscribers.delete(listener);
  }

  async load<TState>(
    definition: AggregateDefinition<TState>,
    id: StreamId,
  ): Promise<{ state: TState; version: number }> {
    const snapshot = await this.storage.loadSnapshot<TState>(id);
    let state = snapshot ? snapshot.state : definition.initialState();
    let version = snapshot ? snapshot.version : 0;
    const events = await this.storage.read(id, version);
    for (const event of events) {
      state = definition.reduce(state, event);
      version = event.version + 1;
    }
    return { state, version };
  }

  async execute<TState, TCommand>(
    definition: AggregateDefinition<TState>,
    id: StreamId,
    command: TCommand,
    decide: (state: TState, command: TCommand) => Array<{ type: string; payload: unknown }>,
  ): Promise<EventEnvelope[]> {
    for (let attempt = 0; ; attempt++) {
      const { state, version } = await this.load(definition, id);
      const decided = decide(state, command);
      const envelopes = decided.map((event, index) => ({
        id: randomUUID(),
        streamId: id,
        type: event.type,
        version: version + index,
        recordedAt: this.clock.now(),
        payload: event.payload,
      }));
      try {
        await this.storage.append(id, envelopes, version);
      } catch (error) {
        const retry =
          error instanceof ConcurrencyError &&
          this.conflictPolicy === ConflictPolicy.Retry &&
          attempt < this.maxRetries;
        if (!retry) {
          throw error;
        }
        this.logger?.warn(`retrying ${id} after a conflict (attempt ${attempt + 1})`);
        continue;
      }
      await this.maybeSnapshot(definition, id, version + envelopes.length);
      envelopes.forEach((event) => this.subscribers.forEach((listener) => listener(event)));
      return envelopes;
    }
  }

  private async maybeSnapshot<TState>(
    definition: AggregateDefinition<TState>,
    id: StreamId,
    version: number,
  ): Promise<void> {
    const every = definition.snapshotEvery;
    if (!every || version % every !== 0) {
      return;
    }
    const { state } = await this.load(definition, id);
    await this.storage.saveSnapshot({ streamId: id, version, state, takenAt: this.clock.now() });
  }
}

export async function* replay(
  storage: StorageAdapter,
  batchSize = 500,
): AsyncGenerator<EventEnvelope, void, undefined> {
  let position = 0;
  while (true) {
    const batch = await storage.readAll(position, batchSize);
    if (batch.length === 0) {
      return;
    }
    yield* batch;
    position += batch.length;
  }
}
