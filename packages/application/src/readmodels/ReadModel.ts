/**
 * How a read model is written: a SQL table kept by an inline projection, with one handler per event it cares
 * about. Handlers see the event's data typed by the event schema's encoded form (what the command handler stored),
 * so renaming a field of an event fails to compile here instead of silently writing nulls.
 */
import type { Projection, RecordedEvent } from "@cairn/event-store"
import { Effect, type Schema } from "effect"
import { SqlClient } from "effect/sql"

type Tagged = { readonly _tag: string }

/** One handler per event type, by tag; the data it gets is that event's stored JSON. */
export type Handlers<Event extends Tagged> = {
  readonly [Tag in Event["_tag"]]?: (sql: SqlClient.SqlClient, event: Extract<Event, { readonly _tag: Tag }>) => Effect.Effect<unknown, unknown>
}

export interface ReadModelSpec<S extends Schema.Top> {
  /** The name `cli replay <name>` checks it by, and `cli replay --in-place <name>` rebuilds it by. */
  readonly name: string
  /** The events it follows: a union of event schemas. */
  readonly events: S
  /** Creates its tables and indexes if they are missing. */
  readonly setup: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>
  /** Its tables, emptied before a rebuild. */
  readonly tables: ReadonlyArray<string>
  readonly on: Handlers<S["Encoded"] & Tagged>
}

export const make = <S extends Schema.Top>(spec: ReadModelSpec<S>): Projection<SqlClient.SqlClient> => {
  const handlers = spec.on as Record<string, ((sql: SqlClient.SqlClient, event: unknown) => Effect.Effect<unknown, unknown>) | undefined>
  return {
    name: spec.name,
    setup: SqlClient.SqlClient.use(spec.setup),
    apply: (events: ReadonlyArray<RecordedEvent>) =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        for (const event of events) {
          const handle = handlers[event.type]
          if (handle !== undefined) yield* handle(sql, event.data)
        }
      }),
    reset: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const table of spec.tables) yield* sql`DELETE FROM ${sql(table)}`
    })
  }
}

/** An `ILIKE` pattern matching names that contain `text` as it is: its `%`, `_` and `\` match only themselves. */
export const containing = (text: string) => `%${text.replace(/[\\%_]/g, "\\$&")}%`
