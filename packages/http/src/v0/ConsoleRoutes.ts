/**
 * An agent's console: `POST /v0/agents/{agentId}/console/exec` `{command, cwd?}` runs one shell command in the
 * agent's workspace and answers how it ended (any exit code is a 200). Every input problem is 400 `Invalid command`.
 */
import { Console } from "@cairn/application"
import { AgentConsole, ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Body from "../Body.ts"
import * as Kit from "./Kit.ts"

// The body is read as any JSON: a missing, empty or non-string command (or a body that is not an object) is the
// console's own `Invalid command`, decided by the domain's rules.
const field = (body: unknown, name: string): unknown =>
  typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>)[name] : undefined

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const agentConsole = yield* Console

    yield* agentRoute("POST", "/v0/agents/:agentId/console/exec", ({ principal, agentId, body }) =>
      Effect.gen(function*() {
        const input = yield* body(Schema.Unknown).pipe(
          // A NUL in the command or the cwd is the console's own refusal, as the contract names it.
          Effect.catchIf((e) => e instanceof ValidationFailed && e.detail === Body.nulDetail, () =>
            Effect.fail(new AgentConsole.InvalidCommand({ reason: "NUL character in the request" })))
        )
        return yield* agentConsole.exec(principal, agentId, { command: field(input, "command"), cwd: field(input, "cwd") })
      }))
  })
)
