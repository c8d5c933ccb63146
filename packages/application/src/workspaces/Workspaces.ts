/** Creates workspaces (an administrator's act) through the command handler, and reads them back from their table. */
import { Workspace } from "@cairn/domain"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CommandHandler } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import { SecretVault } from "../secrets/SecretVault.ts"
import * as WorkspacesTable from "../readmodels/WorkspacesTable.ts"

export type { WorkspaceView } from "../readmodels/WorkspacesTable.ts"

export class Workspaces extends Context.Service<Workspaces>()("cairn/Workspaces", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const vault = yield* SecretVault
    const workspaces = WorkspacesTable.queries(yield* SqlClient.SqlClient)

    /** Creates the workspace and returns its new id; the agent limit defaults to the plan's. */
    const create = Effect.fn("Workspaces.create")(function*(input: {
      readonly name: string
      readonly plan: Workspace.Plan
      readonly agentLimit?: number
      readonly internal: boolean
    }) {
      const workspaceId = crypto.randomUUID()
      const command = new Workspace.CreateWorkspace({
        workspaceId,
        name: input.name,
        plan: input.plan,
        agentLimit: input.agentLimit ?? Workspace.defaultAgentLimit(input.plan),
        internal: input.internal,
        at: yield* now
      })
      yield* commands.execute(Workspace.decider, Workspace.stream(workspaceId), command, { actor: "admin" })
      return workspaceId
    })

    const get = (workspaceId: string) => workspaces.byId(workspaceId)

    /**
     * Deletes a workspace without agents: its keys stop working (the keys table revokes them with it), and its data
     * key is destroyed, so every secret value it ever sealed, in the immutable log too, can never be read again.
     */
    const remove = Effect.fn("Workspaces.remove")(function*(workspaceId: string) {
      yield* commands.execute(Workspace.decider, Workspace.stream(workspaceId), new Workspace.DeleteWorkspace({ workspaceId, at: yield* now }), { actor: "admin" })
      yield* vault.shred(workspaceId)
    })

    return { create, get, remove }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
