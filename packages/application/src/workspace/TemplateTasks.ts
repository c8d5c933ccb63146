/**
 * The scheduled tasks an agent's template declares, created in its gateway once it runs (the template's other parts,
 * files and skills, are in place before its first start; tasks live in the engine's scheduler, so they wait for the
 * gateway). `AgentCreated` names the template's folder, content-addressed, so the tasks are those of the manifest the
 * agent was made from. Each is recorded as the tasks API records a create (`TaskCreated`, with `fromTemplate`), as the
 * agent's user, then `TemplateTasksCreated` once for all. A worker on each node does it for the agents that node
 * runs; a round that fails is tried again by the next.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { ScheduledTask } from "@cairn/domain"
import { taskBody } from "@cairn/templates"
import { Context, type Duration, Effect, Layer, Result } from "effect"
import { SqlClient } from "effect/sql"
import { AgentsNode } from "../cluster/NodeLeases.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import * as AgentsTable from "../readmodels/AgentsTable.ts"
import * as TemplateTasksTable from "../readmodels/TemplateTasksTable.ts"
import { Templates } from "../templates/Templates.ts"

export class TemplateTasks extends Context.Service<TemplateTasks>()("cairn/TemplateTasks", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const engine = yield* AgentEngine
    const templates = yield* Templates
    const node = yield* AgentsNode
    const table = TemplateTasksTable.queries(yield* SqlClient.SqlClient)
    const agents = AgentsTable.queries(yield* SqlClient.SqlClient)

    /**
     * Creates the agent's template's tasks. A task its gateway has by that name already (a round cut off half-way)
     * is not created twice; one the task rules refuse, or one past the per-agent limit, is skipped and logged.
     */
    const createFor = (pending: TemplateTasksTable.PendingTemplateTasks) =>
      Effect.gen(function*() {
        const { agentId, workspaceId, templateId } = pending
        const actor = { actor: pending.userId }
        const declared = ((yield* templates.manifestAt(pending.snapshotCid)).tasks ?? []).map(taskBody)
        const inEngine = [...yield* engine.listTasks(agentId, { includeDisabled: true })]
        const recorded = (yield* commands.load(ScheduledTask.decider, ScheduledTask.stream(agentId))).state.live
        const taskIds: Array<string> = []
        for (const body of declared) {
          const at = yield* now
          const parsed = ScheduledTask.parseSpec(body, at)
          if (Result.isFailure(parsed)) {
            yield* Effect.logWarning(`Agent ${agentId}: template ${templateId}'s task ${body.name} skipped: ${parsed.failure.reason}`)
            continue
          }
          const spec = parsed.success
          const existing = inEngine.find((task) => !task.system && task.name === spec.name)
          if (existing === undefined && Result.isFailure(ScheduledTask.checkRoom(inEngine))) {
            yield* Effect.logWarning(`Agent ${agentId}: template ${templateId}'s task ${spec.name} skipped: the agent has ${ScheduledTask.MaxPerAgent} tasks`)
            continue
          }
          const task = existing ?? (yield* engine.addTask(agentId, spec))
          if (existing === undefined) inEngine.push(task)
          if (!recorded.has(task.id)) {
            yield* commands.execute(ScheduledTask.decider, ScheduledTask.stream(agentId), new ScheduledTask.RecordTaskCreated({
              agentId, workspaceId, taskId: task.id, name: task.name, schedule: spec.schedule, payloadKind: spec.payload.kind,
              enabled: task.enabled, fromTemplate: templateId, at
            }), actor)
          }
          taskIds.push(task.id)
        }
        yield* commands.execute(ScheduledTask.decider, ScheduledTask.stream(agentId), new ScheduledTask.RecordTemplateTasksCreated({
          agentId, templateId, taskIds, at: yield* now
        }), actor)
        if (taskIds.length > 0) yield* Effect.logInfo(`Agent ${agentId}: created ${taskIds.length} task(s) its template ${templateId} declares`)
      })

    /** One round over the agents this node runs, running now, that still lack their template's tasks. */
    const round = Effect.gen(function*() {
      const waiting = yield* table.pending
      if (waiting.length === 0) return
      const running = new Set((yield* agents.runningOn(node)).map((agent) => agent.agentId))
      for (const pending of waiting.filter((p) => running.has(p.agentId))) {
        yield* createFor(pending).pipe(
          Effect.catchCause((cause) => Effect.logWarning(`Agent ${pending.agentId}: its template's tasks are not created yet`, cause))
        )
      }
    })

    /** For as long as the server runs: a round every `interval`. */
    const run = (interval: Duration.Input = "2 seconds") => round.pipe(Effect.andThen(Effect.sleep(interval)), Effect.forever)

    return { round, run }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
