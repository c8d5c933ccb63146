/**
 * Idle agents sleep, and wake in time for their scheduled tasks (decision 0055). Every `checkEveryMs`, each agent
 * running on this node that nothing was addressed to for `idleAfterMs` is put to sleep through its gateway's owner
 * (Gateway.sleep: gateway stopped, workspace snapshotted, `AgentFellAsleep` recorded), unless:
 * - a connection to it is open (a Control UI, a chat stream, a proxied request);
 * - it has a messaging channel and channels may not sleep: a polling channel (Telegram) only hears its messages
 *   while the gateway runs, so nothing would ever wake it;
 * - it has an active domain to an app's port: the app is a process of the agent's that its gateway does not start
 *   again on a wake, so its domain would answer 502 after one (a domain to the gateway itself does not count);
 * - one of its own scheduled tasks falls due within two wake leads, or its tasks cannot be read.
 * A sleeping agent records when its next task falls due, less `wakeLeadMs`; the same round wakes the agents whose
 * time has come, so the gateway is up when the task fires. Requests wake agents through Gateway.ready.
 */
import { AgentEngine } from "@cairn/agent-engine"
import { Domain } from "@cairn/domain"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { AgentsNode } from "../cluster/NodeLeases.ts"
import { Gateway } from "../gateway/Gateway.ts"
import * as AgentsTable from "../readmodels/AgentsTable.ts"
import * as ChannelsTable from "../readmodels/ChannelsTable.ts"
import * as DomainsTable from "../readmodels/DomainsTable.ts"
import { Snapshots } from "../snapshots/Snapshots.ts"

export interface SleepSettings {
  /** How long an agent may go without anything addressed to it before it sleeps; 0: agents never sleep. */
  readonly idleAfterMs: number
  /** Whether agents with a messaging channel may sleep too (they cannot wake by themselves: see above). */
  readonly channelsSleep: boolean
  /** How often the idle agents and the tasks falling due are looked for. */
  readonly checkEveryMs: number
  /** How long before its next task a sleeping agent is woken: a cold start, with room to spare. */
  readonly wakeLeadMs: number
}

export const defaultSleepSettings: SleepSettings = {
  idleAfterMs: 15 * 60_000,
  channelsSleep: false,
  checkEveryMs: 15_000,
  wakeLeadMs: 60_000
}

export const SleepSettings = Context.Reference<SleepSettings>("cairn/AgentSleep/Settings", { defaultValue: () => defaultSleepSettings })

export class AgentSleep extends Context.Service<AgentSleep>()("cairn/AgentSleep", {
  make: Effect.gen(function*() {
    const gateway = yield* Gateway
    const snapshots = yield* Snapshots
    const engine = yield* AgentEngine
    const sql = yield* SqlClient.SqlClient
    const agents = AgentsTable.queries(sql)
    const channels = ChannelsTable.queries(sql)
    const domains = DomainsTable.queries(sql)
    const node = yield* AgentsNode
    const settings = yield* SleepSettings

    /** When the agent's next own task fires (ms; undefined: none scheduled); fails when the engine cannot say. */
    const nextTaskAt = (agentId: string) =>
      Effect.map(engine.listTasks(agentId, { includeDisabled: false }), (tasks) => {
        const due = tasks
          .filter((task) => task.enabled && !task.system && task.state.nextRunAt !== undefined)
          .map((task) => Date.parse(task.state.nextRunAt!))
          .filter((at) => !Number.isNaN(at))
        return due.length === 0 ? undefined : Math.min(...due)
      })

    /** Puts the agent to sleep if it has been idle long enough and nothing keeps it awake; whether it did. */
    const consider = (agent: AgentsTable.AgentView) =>
      Effect.gen(function*() {
        const since = yield* gateway.quietSince(agent.agentId)
        if (since === undefined) return false
        const nowMs = yield* Clock.currentTimeMillis
        const idleMs = nowMs - since
        if (idleMs < settings.idleAfterMs) return false
        if (!settings.channelsSleep && (yield* channels.ofAgent(agent.agentId)).some((channel) => channel.enabled)) return false
        const apps = (yield* domains.ofAgent(agent.agentId)).filter((d) => d.status === "active" && d.targetPort !== Domain.gatewayPort)
        if (apps.length > 0) return false
        const next = yield* nextTaskAt(agent.agentId).pipe(Effect.option)
        if (Option.isNone(next)) return false
        if (next.value !== undefined && next.value - nowMs < 2 * settings.wakeLeadMs) return false
        return yield* gateway.sleep(agent.agentId, since, {
          idleMs,
          ...(next.value === undefined ? {} : { wakeAt: new Date(next.value - settings.wakeLeadMs).toISOString() }),
          snapshot: snapshots.beforeSleep(agent.agentId, agent.workspaceId)
        })
      })

    /** One look: idle agents put to sleep (when sleep is on), and sleeping agents whose task falls due woken. */
    const round = Effect.gen(function*() {
      if (settings.idleAfterMs > 0) {
        for (const agent of yield* agents.runningOn(node)) {
          yield* consider(agent).pipe(Effect.catchCause((cause) => Effect.logWarning(`Agent ${agent.agentId}: could not be put to sleep`, cause)))
        }
      }
      yield* gateway.wakeForTasks
    })

    /** For as long as the node runs. */
    const run = round.pipe(
      Effect.catchCause((cause) => Effect.logError("Agent sleep round failed", cause)),
      Effect.andThen(Effect.sleep(settings.checkEveryMs)),
      Effect.forever
    )

    return { round, run, settings }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
