/**
 * A writer whose transaction stays open between steps, on its own connection: how tests hold a slow append
 * open to prove that readers neither skip nor repeat events that commit out of position order.
 */
import { EventStore, type StreamAppend } from "@cairn/event-store"
import type { OpenAppend } from "@cairn/event-store/testing"
import { Deferred, Effect, Queue } from "effect"
import { SqlClient } from "effect/sql"

type Step =
  | { readonly _tag: "Begin"; readonly done: Deferred.Deferred<void> }
  | { readonly _tag: "Append"; readonly appends: ReadonlyArray<StreamAppend>; readonly done: Deferred.Deferred<void> }
  | { readonly _tag: "Commit"; readonly done: Deferred.Deferred<void> }

export const openAppend = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const store = yield* EventStore
  const steps = yield* Queue.unbounded<Step>()
  const transaction = sql.withTransaction(Effect.gen(function*() {
    for (;;) {
      const step = yield* Queue.take(steps)
      if (step._tag === "Commit") return step.done
      if (step._tag === "Begin") yield* sql`SELECT pg_current_xact_id()::text AS xid`
      if (step._tag === "Append") yield* store.append(step.appends)
      yield* Deferred.succeed(step.done, undefined)
    }
  }))
  // "Committed" is reported once the transaction has really committed, not when it was asked to.
  yield* Effect.forkScoped(Effect.orDie(transaction.pipe(Effect.flatMap((done) => Deferred.succeed(done, undefined)))))
  const run = (make: (done: Deferred.Deferred<void>) => Step) =>
    Effect.gen(function*() {
      const done = yield* Deferred.make<void>()
      yield* Queue.offer(steps, make(done))
      yield* Deferred.await(done)
    })
  return {
    begin: run((done) => ({ _tag: "Begin", done })),
    append: (appends) => run((done) => ({ _tag: "Append", appends, done })),
    commit: run((done) => ({ _tag: "Commit", done }))
  } satisfies OpenAppend
})
