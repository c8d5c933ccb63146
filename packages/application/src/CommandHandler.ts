/**
 * The one way state changes: load each stream a command touches by folding its events, `decide`, and append what
 * was decided at the exact versions that were read, in one transaction. When another writer got there first, the
 * streams are loaded and decided again, a bounded number of times. Services never hand-write load and append;
 * an invariant across aggregates (a quota, a unique name) is a second stream decided in the same append.
 */
import type { AnyDecider, CommandOf, ErrorOf, EventOf, StateOf } from "@cairn/domain"
import {
  EventStore,
  type EventStoreUnavailable,
  type EventMetadata,
  ExpectedVersion,
  type StreamAppend
} from "@cairn/event-store"
import { Context, Effect, Layer, Schema } from "effect"

/** A stream folded into its state, with the version to expect when appending after it. */
export interface Loaded<S> {
  readonly state: S
  readonly version: number
}

/** One command for one stream, decided by `decider`. */
export interface Decision<D extends AnyDecider> {
  readonly decider: D
  readonly stream: string
  readonly command: CommandOf<D>
  /** The stream as the service already loaded it: the first attempt decides on it instead of reading it again. */
  readonly loaded?: Loaded<StateOf<D>>
  /** Decided on the decider's initial state and appended whatever the stream holds: see `unreadDecision`. */
  readonly unread?: true
}

export const decision = <D extends AnyDecider>(
  decider: D,
  stream: string,
  command: CommandOf<D>,
  loaded?: Loaded<StateOf<D>>
): Decision<D> => (loaded === undefined ? { decider, stream, command } : { decider, stream, command, loaded })

/**
 * A command whose decision no history of the stream can change (recording an upload of a fresh file id on its
 * CID's record): the stream is not read and not guarded, and the command's events are appended after whatever it
 * holds, atomically with the other decisions. Its outcome's state is the initial state with those events, not the
 * stream's. Only sound when every state decides the command the same way.
 */
export const unreadDecision = <D extends AnyDecider>(decider: D, stream: string, command: CommandOf<D>): Decision<D> => ({
  decider,
  stream,
  command,
  unread: true
})

/** A stream with no history yet (its id was just generated here): decided without a read, guarded at version 0. */
export const emptyStream = <D extends AnyDecider>(decider: D): Loaded<StateOf<D>> => ({ state: decider.initial as StateOf<D>, version: 0 })

/** What a decision recorded, and the stream's state after it. */
export interface Outcome<D extends AnyDecider> {
  readonly events: ReadonlyArray<EventOf<D>>
  readonly state: StateOf<D>
  /** The stream's version after the append (undefined for an unread decision): with `state`, a `Loaded` to decide on next. */
  readonly version: number | undefined
}

type Outcomes<Ds extends ReadonlyArray<Decision<AnyDecider>>> = { readonly [K in keyof Ds]: Outcome<Ds[K]["decider"]> }
type Refusal<Ds extends ReadonlyArray<Decision<AnyDecider>>> = ErrorOf<Ds[number]["decider"]>

/** Every attempt lost a race to another writer of the same streams. */
export class TooMuchContention extends Schema.TaggedError<TooMuchContention>()("TooMuchContention", { streams: Schema.Array(Schema.String) }) {
  readonly status = 409
  override readonly message = "Conflict: the resource was changed concurrently, try again"
}

/** How many times a command is decided again after losing a race (each loss means another writer won). */
export const MaxAttempts = Context.Reference<number>("cairn/CommandHandler/MaxAttempts", { defaultValue: () => 100 })

// Decoders and encoders are built once per event schema, not per command.
const codecs = new WeakMap<object, {
  readonly decode: (data: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<unknown>, Schema.SchemaError>
  readonly encode: (event: unknown) => unknown
}>()
const codecOf = (decider: AnyDecider) => {
  let codec = codecs.get(decider.events)
  if (codec === undefined) {
    codec = {
      decode: Schema.decodeUnknownEffect(Schema.Array(decider.events)),
      encode: Schema.encodeSync(decider.events as Schema.Codec<unknown, unknown>)
    }
    codecs.set(decider.events, codec)
  }
  return codec
}

export class CommandHandler extends Context.Service<CommandHandler>()("cairn/CommandHandler", {
  make: Effect.gen(function*() {
    const store = yield* EventStore

    /** The stream's state, and the version to expect when appending after it. */
    const load = <D extends AnyDecider>(decider: D, stream: string): Effect.Effect<Loaded<StateOf<D>>, EventStoreUnavailable> =>
      store.readStream(stream).pipe(
        Effect.flatMap((stored) =>
          codecOf(decider).decode(stored.map((e) => e.data)).pipe(
            // A stored event that no longer decodes is a corrupt log: a defect, never a client's error.
            Effect.orDie,
            Effect.map((events) => ({ state: events.reduce(decider.evolve, decider.initial) as StateOf<D>, version: stored.length }))
          )
        )
      )

    const attempt = <const Ds extends ReadonlyArray<Decision<AnyDecider>>>(decisions: Ds, metadata: EventMetadata, first: boolean) =>
      Effect.gen(function*() {
        const outcomes: Array<Outcome<AnyDecider>> = []
        const appends: Array<StreamAppend> = []
        for (const { decider, stream, command, loaded, unread } of decisions) {
          const { state, version } = unread
            ? { state: decider.initial, version: undefined }
            : first && loaded !== undefined
            ? loaded
            : yield* load(decider, stream)
          const events = yield* Effect.fromResult(decider.decide(command, state))
          const { encode } = codecOf(decider)
          outcomes.push({ events, state: events.reduce(decider.evolve, state), version: version === undefined ? undefined : version + events.length })
          // A stream with nothing to record still guards its version: what was decided on it must still hold.
          // An unread one has no version to guard, and nothing to append when nothing was decided.
          if (version === undefined && events.length === 0) continue
          appends.push({
            stream,
            expected: version === undefined ? ExpectedVersion.Any : ExpectedVersion.Exact(version),
            events: events.map((event: { readonly _tag: string }) => ({ type: event._tag, data: encode(event), metadata }))
          })
        }
        if (appends.some((a) => a.events.length > 0)) yield* store.append(appends)
        return outcomes as unknown as Outcomes<Ds>
      })

    /**
     * Decides every command the plan gives against its stream and appends all their events atomically, or none.
     * When a stream moved meanwhile, the plan runs again (it may read what it needs to choose its decisions, such
     * as the secrets an agent holds when it is deleted), and everything is decided again.
     */
    const executePlan = <const Ds extends ReadonlyArray<Decision<AnyDecider>>, E, R>(
      plan: Effect.Effect<Ds, E, R>,
      metadata: EventMetadata
    ): Effect.Effect<Outcomes<Ds>, E | Refusal<Ds> | TooMuchContention | EventStoreUnavailable, R> =>
      Effect.gen(function*() {
        const maxAttempts = yield* MaxAttempts
        for (let tries = 1;; tries++) {
          const decisions = yield* plan
          const result = yield* attempt(decisions, metadata, tries === 1).pipe(
            Effect.catchTag("WrongExpectedVersion", (conflict) =>
              tries < maxAttempts ? Effect.succeed(undefined) : Effect.fail(new TooMuchContention({ streams: [conflict.stream] }))),
            // Malformed appends and inline projections that fail are bugs, not a client's doing.
            Effect.catchTags({
              IdempotencyConflict: Effect.die,
              InvalidAppend: Effect.die,
              ProjectionFailed: Effect.die
            })
          )
          if (result !== undefined) return result
        }
      }) as Effect.Effect<Outcomes<Ds>, E | Refusal<Ds> | TooMuchContention | EventStoreUnavailable, R>

    /** Decides every command against its stream and appends all their events atomically, or none. */
    const executeAll = <const Ds extends ReadonlyArray<Decision<AnyDecider>>>(decisions: Ds, metadata: EventMetadata) =>
      executePlan(Effect.succeed(decisions), metadata)

    /** Decides one command against its stream (as `loaded`, when the service has just read it) and appends what it decided. */
    const execute = <D extends AnyDecider>(decider: D, stream: string, command: CommandOf<D>, metadata: EventMetadata, loaded?: Loaded<StateOf<D>>) =>
      Effect.map(executeAll([decision(decider, stream, command, loaded)], metadata), ([outcome]) => outcome as Outcome<D>)

    /**
     * Records a command on an audit log: a stream whose decider folds every history into the same state, so no
     * history can refuse what it records (an agent's console runs, its uploads). It is decided on the initial state
     * and appended whatever the stream holds, without reading it: a long log costs nothing to add to.
     */
    const record = <D extends AnyDecider>(decider: D, stream: string, command: CommandOf<D>, metadata: EventMetadata) =>
      Effect.gen(function*() {
        const events: ReadonlyArray<EventOf<D>> = yield* Effect.fromResult(decider.decide(command, decider.initial))
        const { encode } = codecOf(decider)
        yield* store.append([{
          stream,
          expected: ExpectedVersion.Any,
          events: events.map((event: { readonly _tag: string }) => ({ type: event._tag, data: encode(event), metadata }))
        }]).pipe(Effect.catchTags({
          WrongExpectedVersion: Effect.die,
          IdempotencyConflict: Effect.die,
          InvalidAppend: Effect.die,
          ProjectionFailed: Effect.die
        }))
        return events
      }) as Effect.Effect<ReadonlyArray<EventOf<D>>, ErrorOf<D> | EventStoreUnavailable>

    return { load, execute, executeAll, executePlan, record }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
