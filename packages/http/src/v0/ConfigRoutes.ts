/**
 * An agent's runtime config: read (`{config, hash}`), write (`{config, baseHash?}`, answered with the new config and
 * hash), and validate with the engine's own validator (`{valid, issues, output}`). Bodies are read as text here, so
 * that one that is not JSON is the documented 400 `Invalid JSON`, not the kit's `Validation failed`.
 */
import { RuntimeConfig } from "@cairn/application"
import { Effect } from "effect"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const config = yield* RuntimeConfig

    yield* agentRoute("GET", "/v0/agents/:agentId/config", ({ principal, agentId }) =>
      Effect.map(config.read(principal, agentId), ({ config, hash }) => ({ config, hash })))

    yield* agentRoute("PUT", "/v0/agents/:agentId/config", ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const written = yield* config.write(principal, agentId, yield* request.text)
        return { success: true, config: written.config, hash: written.hash }
      }))

    yield* agentRoute("POST", "/v0/agents/:agentId/config/validate", ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const { valid, issues, output } = yield* config.validate(principal, agentId, yield* request.text)
        return { valid, issues, output }
      }))
  })
)
