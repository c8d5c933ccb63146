/**
 * An agent's runtime config (the engine's own config, credentials redacted the way the engine redacts them): read,
 * validated with the engine's own validator, and written through the AgentEngine port. A write is recorded on the
 * agent's config stream with the caller as actor: the top-level settings it changed and the hashes, never a value
 * (a config holds credentials). The engine's failures become the documented errors of RuntimeConfig in the domain;
 * what the engine said goes to the log.
 */
import { AgentEngine, type ConfigValidation, type EngineConfig } from "@cairn/agent-engine"
import { type Agent, RuntimeConfig as Rules } from "@cairn/domain"
import { Context, Effect, Layer } from "effect"
import type { Principal } from "../Access.ts"
import { Agents } from "../agents/Agents.ts"
import { Gateway } from "../gateway/Gateway.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { now } from "../Now.ts"

export type { ConfigValidation, EngineConfig }

export class RuntimeConfig extends Context.Service<RuntimeConfig>()("cairn/RuntimeConfig", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const engine = yield* AgentEngine
    const agents = yield* Agents
    const gateway = yield* Gateway
    /** Waits for a gateway on its way up; 503 GatewayStarting if it is not up in time. */
    const ready = (agentId: string): Effect.Effect<void, Agent.GatewayStarting> => gateway.ready(agentId)

    const logged = (what: string) => (error: unknown) => Effect.logWarning(what, error)

    const read = Effect.fn("RuntimeConfig.read")(function*(principal: Principal, agentId: string) {
      yield* agents.get(principal.workspaceId, agentId)
      yield* ready(agentId)
      return yield* engine.readConfig(agentId).pipe(
        Effect.tapError(logged("Runtime config could not be read")),
        Effect.mapError(() => new Rules.FailedToReadConfig({ agentId }))
      )
    })

    /** Validates, then replaces the config; `body` is the request's text (`{config, baseHash?}`). */
    const write = Effect.fn("RuntimeConfig.write")(function*(principal: Principal, agentId: string, body: string) {
      const { workspaceId, userId } = principal
      yield* agents.get(workspaceId, agentId)
      const { config, baseHash } = yield* Effect.fromResult(Rules.parseWrite(body))
      // A gateway on its way up takes the config from its file as it starts: the write waits for it.
      yield* ready(agentId)
      // What the write replaces, for the record. A config that cannot be read can still be replaced (that is how a
      // broken one is repaired); every key then counts as changed.
      const before = yield* engine.readConfig(agentId).pipe(
        Effect.map((current): EngineConfig | undefined => current),
        Effect.catch((error) => Effect.as(logged("Runtime config could not be read before a write")(error), undefined))
      )
      const failed = () => new Rules.FailedToWriteConfig({ agentId })
      const written = yield* engine.writeConfig(agentId, baseHash === undefined ? { config } : { config, baseHash }).pipe(
        Effect.catchTags({
          ConfigRejected: (error) => Effect.fail(new Rules.InvalidConfig({ issues: error.issues })),
          ConfigChanged: () => Effect.fail(new Rules.ConfigChangedSinceRead({ agentId })),
          ConfigSettingOwned: (error) => Effect.fail(new Rules.SettingsManagedByCairn({ paths: error.paths })),
          ConfigUnwritable: (error) => Effect.andThen(logged("Runtime config could not be written")(error), Effect.fail(failed())),
          ConfigUnreadable: (error) => Effect.andThen(logged("Runtime config could not be written")(error), Effect.fail(failed())),
          AgentNotProvisioned: (error) => Effect.andThen(logged("Runtime config write for an agent the engine does not hold")(error), Effect.fail(failed()))
        })
      )
      yield* commands.execute(Rules.decider, Rules.stream(agentId), new Rules.RecordConfigWrite({
        agentId,
        workspaceId,
        changedPaths: Rules.changedPaths(before?.config ?? {}, config),
        ...(before === undefined ? {} : { previousHash: before.hash }),
        hash: written.hash,
        at: yield* now
      }), { actor: userId })
      return written
    })

    /** Runs the engine's validator on a candidate; `body` is the request's text (`{config}`, an object or a string holding one). */
    const validate = Effect.fn("RuntimeConfig.validate")(function*(principal: Principal, agentId: string, body: string) {
      yield* agents.get(principal.workspaceId, agentId)
      const config = yield* Effect.fromResult(Rules.parseCandidate(body))
      return yield* engine.validateConfig(agentId, config).pipe(
        Effect.tapError(logged("Runtime config validator could not run")),
        Effect.mapError(() => new Rules.ValidationCommandFailed({ agentId }))
      )
    })

    return { read, write, validate }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
