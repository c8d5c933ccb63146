/**
 * An agent's console: `POST /v0/agents/{agentId}/console/exec` `{command, cwd?}` runs one shell command in the
 * agent's workspace and answers how it ended (any exit code is a 200). Every input problem is 400 `Invalid command`.
 */
import { Console, type ConsoleRun } from "@cairn/application"
import { Agent, AgentConsole, ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Body from "../Body.ts"
import * as Kit from "./Kit.ts"

// The body is read as any JSON: a missing, empty or non-string command (or a body that is not an object) is the
// console's own `Invalid command`, decided by the domain's rules.
const field = (body: unknown, name: string): unknown =>
  typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)[name] : undefined

/** How a command ended: its output (cut at the limit: `truncated`), exit code, start and duration. */
const ConsoleRunWire = Schema.Struct({
  stdout: Schema.String,
  stderr: Schema.String,
  exitCode: Schema.Int,
  command: Schema.String,
  timestamp: Schema.String,
  durationMs: Schema.Int,
  truncated: Schema.Boolean,
  timedOut: Schema.Boolean
})
const toWire = (run: ConsoleRun): typeof ConsoleRunWire.Type => ({
  stdout: run.stdout,
  stderr: run.stderr,
  exitCode: run.exitCode,
  command: run.command,
  timestamp: run.timestamp,
  durationMs: run.durationMs,
  truncated: run.truncated,
  timedOut: run.timedOut
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const agentConsole = yield* Console

    yield* agentRoute("POST", "/v0/agents/:agentId/console/exec", { summary: "Run one shell command in the agent's workspace", body: { schema: Schema.Unknown, description: "{command, cwd?}" }, response: { schema: ConsoleRunWire }, errors: [new Agent.AgentNotFound({ agentId: "" }), new AgentConsole.InvalidCommand({ reason: "" }), new AgentConsole.ExecutionFailed({ agentId: "" })] }, ({ principal, agentId, body }) =>
      Effect.gen(function*() {
        const input = yield* body(Schema.Unknown).pipe(
          // A NUL in the command or the cwd is the console's own refusal, as the contract names it.
          Effect.catchIf((e) => e instanceof ValidationFailed && e.detail === Body.nulDetail, () =>
            Effect.fail(new AgentConsole.InvalidCommand({ reason: "NUL character in the request" })))
        )
        return toWire(yield* agentConsole.exec(principal, agentId, { command: field(input, "command"), cwd: field(input, "cwd") }))
      }))
  })
)
