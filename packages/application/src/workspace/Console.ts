/**
 * An agent's console: one shell command run as the agent, in its workspace (or a directory inside it), through the
 * AgentEngine port, within the configured time and output limits. Every attempt that reaches the engine is recorded
 * on the agent's console log with the caller as actor: the command, where, and how it ended (never its output).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { type Agent, AgentConsole } from "@cairn/domain"
import { Context, Effect, Layer } from "effect"
import type { Principal } from "../Access.ts"
import { Agents } from "../agents/Agents.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { Gateway } from "../gateway/Gateway.ts"
import { now } from "../Now.ts"
import { WorkspaceLimits } from "../workspaces/WorkspaceLimits.ts"

/** What a console run answers: how it ended, with its output (each stream cut at the output limit). */
export interface ConsoleRun {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number
  readonly command: string
  /** When it started (ISO 8601). */
  readonly timestamp: string
  readonly durationMs: number
  readonly truncated: boolean
  readonly timedOut: boolean
}

export class Console extends Context.Service<Console>()("cairn/Console", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const engine = yield* AgentEngine
    const agents = yield* Agents
    const gateway = yield* Gateway
    const ready = (agentId: string): Effect.Effect<void, Agent.GatewayStarting> => gateway.ready(agentId)
    const limits = yield* WorkspaceLimits

    const exec = Effect.fn("Console.exec")(function*(
      principal: Principal,
      agentId: string,
      input: { readonly command: unknown; readonly cwd: unknown }
    ) {
      const { workspaceId, userId } = principal
      yield* agents.get(workspaceId, agentId)
      const { command, cwd } = yield* Effect.fromResult(AgentConsole.validateRequest(input))
      // A command runs in the agent as it lives: a sleeping agent is woken first.
      yield* ready(agentId)
      const at = yield* now
      const asked = { agentId, workspaceId, command, ...(cwd === undefined ? {} : { cwd }), at }
      const record = (entry: AgentConsole.ConsoleCommand) =>
        commands.record(AgentConsole.decider, AgentConsole.stream(agentId), entry, { actor: userId })
      const notRun = (reason: AgentConsole.ConsoleCommandNotRun["reason"]) => record(new AgentConsole.RecordNotRun({ ...asked, reason }))
      const result = yield* engine.exec(agentId, {
        command,
        ...(cwd === undefined ? {} : { cwd }),
        timeoutMs: limits.consoleTimeoutMs,
        maxOutputBytes: limits.consoleMaxOutputBytes
      }).pipe(Effect.catchTags({
        WorkingDirectoryOutside: () =>
          notRun("cwd-outside-workspace").pipe(Effect.andThen(Effect.fail(new AgentConsole.InvalidCommand({ reason: "cwd outside the workspace" })))),
        ExecFailed: (error) =>
          Effect.logWarning("Console command could not be started", error).pipe(
            Effect.andThen(notRun("start-failed")),
            Effect.andThen(Effect.fail(new AgentConsole.ExecutionFailed({ agentId })))
          ),
        // The engine does not hold the agent (its node has not brought it back yet): nothing could be started.
        AgentNotProvisioned: (error) =>
          Effect.logWarning("Console command for an agent the engine does not hold", error).pipe(
            Effect.andThen(notRun("start-failed")),
            Effect.andThen(Effect.fail(new AgentConsole.ExecutionFailed({ agentId })))
          )
      }))
      const { exitCode, timedOut, truncated } = result
      const durationMs = Math.round(result.durationMs)
      yield* record(new AgentConsole.RecordRun({ ...asked, exitCode, durationMs, timedOut, truncated }))
      return {
        stdout: result.stdout,
        stderr: result.stderr,
        exitCode,
        command,
        timestamp: at,
        durationMs,
        truncated,
        timedOut
      } satisfies ConsoleRun
    })

    return { exec }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
