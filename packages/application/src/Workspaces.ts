/** Creates workspaces (an administrator's act) and reads them back. */
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { Workspace } from "@cairn/domain"
import { Context, Effect, Layer, Option, Result } from "effect"
import { SqlClient } from "effect/sql"
import { encoder, now } from "./EventCodec.ts"

export interface WorkspaceView {
  readonly id: string
  readonly name: string
  readonly plan: Workspace.Plan
  readonly agentLimit: number
  readonly internal: boolean
  readonly createdAt: string
}

const encode = encoder(Workspace.WorkspaceEvent)

export class Workspaces extends Context.Service<Workspaces>()("cairn/Workspaces", {
  make: Effect.gen(function*() {
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient

    const create = Effect.fn("Workspaces.create")(function*(input: {
      readonly name: string
      readonly plan: Workspace.Plan
      readonly agentLimit?: number
      readonly internal: boolean
    }) {
      const workspaceId = crypto.randomUUID()
      const at = yield* now
      const events = Result.getOrThrow(Workspace.create({
        workspaceId,
        name: input.name,
        plan: input.plan,
        agentLimit: input.agentLimit ?? Workspace.defaultAgentLimit(input.plan),
        internal: input.internal,
        at
      }))
      yield* store.append([{
        stream: Workspace.stream(workspaceId),
        expected: ExpectedVersion.NoStream,
        events: events.map((e) => encode(e, { actor: "admin" }))
      }])
      return workspaceId
    })

    const get = (workspaceId: string) =>
      sql<{ id: string; name: string; plan: Workspace.Plan; agent_limit: number; internal: boolean; created_at: Date }>`
        SELECT id, name, plan, agent_limit, internal, created_at FROM cairn_workspaces WHERE id = ${workspaceId}`.pipe(
        Effect.orDie,
        Effect.map(([row]) =>
          Option.fromNullishOr(row).pipe(Option.map((row): WorkspaceView => ({
            id: row.id,
            name: row.name,
            plan: row.plan,
            agentLimit: row.agent_limit,
            internal: row.internal,
            createdAt: row.created_at.toISOString()
          })))
        )
      )

    return { create, get }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
