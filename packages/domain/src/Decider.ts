/**
 * The shape every aggregate takes: `decide` turns a command and the current state into the events to record (or
 * a typed refusal), `evolve` folds one event into the state, and `events` is the schema the events are stored
 * with. All of it is pure and total: time, ids and limits come inside the command. The application's command
 * handler is the one place that loads a stream, decides and appends.
 */
import type { Result, Schema } from "effect"

export interface Decider<Command, Event, State, Error> {
  readonly initial: State
  readonly decide: (command: Command, state: State) => Result.Result<ReadonlyArray<Event>, Error>
  readonly evolve: (state: State, event: Event) => State
  /** How the events are stored: encoded on append, decoded on load. */
  readonly events: Schema.Codec<Event, unknown>
}

export type AnyDecider = Decider<any, any, any, any>
export type CommandOf<D> = D extends Decider<infer C, any, any, any> ? C : never
export type EventOf<D> = D extends Decider<any, infer E, any, any> ? E : never
export type StateOf<D> = D extends Decider<any, any, infer S, any> ? S : never
export type ErrorOf<D> = D extends Decider<any, any, any, infer Err> ? Err : never

/** The state after `history`: what the command handler folds a stream into before deciding. */
export const fold = <E, S>(decider: Pick<Decider<unknown, E, S, unknown>, "initial" | "evolve">, history: ReadonlyArray<E>): S =>
  history.reduce(decider.evolve, decider.initial)

/**
 * An event's fields without its tag: for a command that is recorded exactly as it is asked (`CreateX` → `XCreated`),
 * so the two cannot drift apart.
 */
export const fieldsOf = <Fields extends { readonly _tag: unknown }>(fields: Fields): Omit<Fields, "_tag"> => {
  const { _tag, ...rest } = fields
  return rest
}
