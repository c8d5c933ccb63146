/**
 * The gateway owner's use cases, driven through the application services without HTTP: create, restart, a
 * workspace reset, a channel change, a crash and its recovery, a resume after Cairn restarted, a failover adoption
 * and a delete. Each is given an agent's history, runs one use case, and checks the events it recorded and what the
 * (simulated) engine was left doing. The event store counts how often the agent's stream is read.
 */
import { AgentEngine, SimulatedEngineControl } from "@cairn/agent-engine"
import { Agents, Channels, CrashBackoff, Domains, Gateway, type Principal, Services, Snapshots, Workspaces } from "@cairn/application"
import { EventStore } from "@cairn/event-store"
import { TestRuntime } from "@cairn/runtime/testing"
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"

/** How many times each stream was read since the counter was last cleared. */
const reads = new Map<string, number>()
const countingStore = Layer.effect(EventStore, Effect.map(EventStore, (store): EventStore["Service"] => ({
  ...store,
  readStream: (stream: string) => {
    reads.set(stream, (reads.get(stream) ?? 0) + 1)
    return store.readStream(stream)
  }
})))

/** The application's services over the counting store, on the test runtime's database and simulated ports. */
// Fresh: the test runtime builds the same services layer, which would otherwise be shared with its own store.
const services = Layer.fresh(Services.layer).pipe(Layer.provide(countingStore), Layer.provideMerge(TestRuntime.layerTest({ startDelay: "1 millis" })))

const backoff = { initial: "1 millis", max: "10 millis", stableAfter: "1 minute" } as const

/** A new workspace (pro plan, so channels are allowed) and a principal in it. */
const newPrincipal = Effect.gen(function*() {
  const workspaceId = yield* (yield* Workspaces).create({ name: "W", plan: "pro", agentLimit: 5, internal: false })
  return { workspaceId, userId: "ada", keyId: "k1", scopes: ["org:agents"] } satisfies Principal
})

/** An agent whose gateway runs. */
const runningAgent = (principal: Principal, name = "helper") =>
  Effect.gen(function*() {
    const { agent } = yield* (yield* Agents).create(principal, { name })
    yield* waitFor(principal, agent.agentId, "running")
    return agent.agentId
  })

/** Until the agent's status (as its read model has it) is `status`; bounded. */
const waitFor = (principal: Principal, agentId: string, status: string) =>
  Effect.gen(function*() {
    const agents = yield* Agents
    for (let i = 0; i < 500; i++) {
      const found = yield* agents.get(principal.workspaceId, agentId).pipe(Effect.option)
      if (Option.isSome(found) && found.value.status === status) return
      yield* Effect.sleep("5 millis")
    }
    return yield* Effect.die(new Error(`agent ${agentId} never became ${status}`))
  })

/** The agent's own events (its stream), as `type:actor`. */
const agentEvents = (agentId: string) =>
  Effect.map(EventStore.use((store) => store.readStream(`agent-${agentId}`)), (events) => events.map((e) => `${e.type}:${e.metadata.actor}`))

const engineState = (agentId: string) =>
  AgentEngine.use((engine) => engine.status(agentId)).pipe(Effect.map((s) => s.state), Effect.catchTag("AgentNotProvisioned", () => Effect.succeed("gone")))

layer(services, { timeout: "60 seconds", excludeTestServices: true })("the gateway owner", (it) => {
  it.effect("starts a created agent's gateway and records it started on this node", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal
      const agentId = yield* runningAgent(principal)
      assert.deepStrictEqual(yield* agentEvents(agentId), ["AgentCreated:ada", "AgentStarted:engine"])
      assert.strictEqual(yield* engineState(agentId), "running")
    }))

  it.effect("restarts a gateway reading the agent's stream once, and records the request and the start", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal
      const agentId = yield* runningAgent(principal)
      const starts = yield* SimulatedEngineControl.use((c) => c.startCount(agentId))
      reads.clear()
      const agent = yield* (yield* Agents).restart(principal, agentId, undefined)
      assert.strictEqual(agent.status, "running")
      assert.strictEqual(reads.get(`agent-${agentId}`), 1)
      assert.deepStrictEqual((yield* agentEvents(agentId)).slice(-2), ["AgentRestartRequested:ada", "AgentStarted:engine"])
      assert.strictEqual(yield* SimulatedEngineControl.use((c) => c.startCount(agentId)), starts + 1)
    }))

  it.effect("stops the gateway for a workspace reset and starts it again before answering", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal
      const agentId = yield* runningAgent(principal)
      const snapshots = yield* Snapshots
      const { snapshotCid } = yield* snapshots.sync(principal, agentId)
      const starts = yield* SimulatedEngineControl.use((c) => c.startCount(agentId))
      const reset = yield* snapshots.reset(principal, agentId, JSON.stringify({ snapshotCid }))
      assert.strictEqual(reset.snapshotCid, snapshotCid)
      assert.strictEqual(yield* engineState(agentId), "running")
      assert.strictEqual(yield* SimulatedEngineControl.use((c) => c.startCount(agentId)), starts + 1)
      assert.strictEqual((yield* agentEvents(agentId)).at(-1), "AgentStarted:engine")
    }))

  it.effect("restarts a running gateway with a changed channel, its token in the environment", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal
      const agentId = yield* runningAgent(principal)
      yield* (yield* Channels).configure(principal, agentId, "telegram", { botToken: "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw" })
      assert.deepStrictEqual((yield* agentEvents(agentId)).slice(-2), ["AgentRestartRequested:ada", "AgentStarted:engine"])
      const environment = yield* SimulatedEngineControl.use((c) => c.environmentOf(agentId))
      assert.include(Object.values(environment ?? {}), "110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw")
    }))

  it.effect("records a crash and brings the gateway back", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal
      const agentId = yield* runningAgent(principal)
      yield* SimulatedEngineControl.use((c) => c.crash(agentId))
      yield* Gateway.use((gateway) => gateway.checkRunning).pipe(Effect.provideService(CrashBackoff, backoff))
      yield* waitFor(principal, agentId, "running")
      assert.deepStrictEqual((yield* agentEvents(agentId)).slice(2), [
        "AgentStopped:supervisor",
        "AgentRecoveryScheduled:supervisor",
        "AgentRestartRequested:supervisor",
        "AgentStarted:engine"
      ])
    }))

  it.effect("records a gateway the OOM killer ended as stopped for `oom`, shows it on the agent, and brings it back", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal
      const agentId = yield* runningAgent(principal)
      yield* SimulatedEngineControl.use((c) => c.crash(agentId, "oom"))
      assert.strictEqual((yield* AgentEngine.use((engine) => engine.status(agentId))).reason, "oom")
      yield* Gateway.use((gateway) => gateway.checkRunning).pipe(Effect.provideService(CrashBackoff, backoff))
      yield* waitFor(principal, agentId, "running")
      assert.deepStrictEqual((yield* agentEvents(agentId)).slice(2), [
        "AgentStopped:supervisor",
        "AgentRecoveryScheduled:supervisor",
        "AgentRestartRequested:supervisor",
        "AgentStarted:engine"
      ])
      const stopped = (yield* EventStore.use((store) => store.readStream(`agent-${agentId}`)))
        .find((event) => event.type === "AgentStopped")
      assert.strictEqual((stopped?.data as { readonly reason?: string } | undefined)?.reason, "oom")
      // The agent shows its last stop; the running gateway's status no longer carries the reason.
      const agent = yield* (yield* Agents).get(principal.workspaceId, agentId)
      assert.strictEqual(agent.lastStop?.reason, "oom")
      assert.strictEqual(agent.lastStop?.at, new Date(agent.lastStop?.at ?? 0).toISOString())
      assert.isUndefined((yield* AgentEngine.use((engine) => engine.status(agentId))).reason)
    }))

  it.effect("resumes a gateway that did not outlive Cairn", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal
      const agentId = yield* runningAgent(principal)
      // What a restart of Cairn leaves: the log says running, the engine has no gateway up.
      yield* AgentEngine.use((engine) => engine.stop(agentId))
      yield* Gateway.use((gateway) => gateway.resume)
      yield* waitFor(principal, agentId, "running")
      assert.strictEqual(yield* engineState(agentId), "running")
      assert.deepStrictEqual((yield* agentEvents(agentId)).slice(-2), ["AgentRestartRequested:supervisor", "AgentStarted:engine"])
    }))

  it.effect("adopts an agent from an expired node: not started without a workspace to restore, started with one", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal
      const agentId = yield* runningAgent(principal)
      const gateway = yield* Gateway
      yield* gateway.adopt(agentId, "node-b", Effect.succeed(Option.none()))
      const failed = (yield* EventStore.use((store) => store.readStream(`agent-${agentId}`))).at(-1)!
      assert.strictEqual(failed.type, "AgentFailedToStart")
      assert.include((failed.data as { logTail: string }).logTail, "it has no snapshot to restore its workspace from")

      yield* (yield* Agents).restart(principal, agentId, undefined)
      yield* gateway.adopt(agentId, "node-b", Effect.succeed(Option.some("bafy-restored")))
      assert.deepStrictEqual((yield* agentEvents(agentId)).slice(-2), ["AgentRestartRequested:supervisor", "AgentStarted:engine"])
      assert.strictEqual(yield* engineState(agentId), "running")
    }))

  it.effect("deletes the whole agent through the service alone: final snapshot, everything let go, gateway and domains gone", () =>
    Effect.gen(function*() {
      const principal = yield* newPrincipal
      const agentId = yield* runningAgent(principal)
      const domains = yield* Domains
      yield* domains.add(principal, agentId, { subdomain: `gw-${agentId}`, targetPort: 8080 })
      yield* (yield* Agents).remove(principal, agentId)

      assert.strictEqual((yield* agentEvents(agentId)).at(-1), "AgentDeleted:ada")
      assert.strictEqual(yield* engineState(agentId), "gone")
      const snapshots = yield* EventStore.use((store) => store.readStream(`snapshots-${agentId}`))
      assert.deepStrictEqual(snapshots.map((e) => [e.type, (e.data as { trigger?: string }).trigger]), [["SnapshotTaken", "auto"]])
      const domainEvents = yield* EventStore.use((store) => store.readStream(`domains-${agentId}`))
      assert.deepStrictEqual(domainEvents.map((e) => [e.type, (e.data as { reason?: string }).reason]).at(-1), ["DomainRemoved", "agent-deleted"])
      assert.isTrue(Option.isNone(yield* domains.routeFor(`gw-${agentId}.apps.localhost`)))
      const channels = yield* EventStore.use((store) => store.readStream(`channels-${agentId}`))
      assert.strictEqual(channels.length, 0)
    }))
})
