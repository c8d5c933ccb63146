/**
 * An agent's runtime config: read (`{config, hash}`), write (`{config, baseHash?}`, answered with the new config and
 * hash), and validate with the engine's own validator (`{valid, issues, output}`). Bodies are read as text here, so
 * that one that is not JSON is the documented 400 `Invalid JSON`, not the kit's `Validation failed`.
 */
import { AgentsAt, RuntimeConfig as RuntimeConfigService } from "@cairn/application"
import { Agent, RuntimeConfig } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { atDescription, AtQuery } from "./At.ts"
import * as Kit from "./Kit.ts"

/** A runtime config as the engine holds it (credentials redacted as the engine redacts them). */
const EngineConfig = Schema.Record(Schema.String, Schema.Unknown)
const ConfigRead = Schema.Struct({ config: EngineConfig, hash: Schema.String })
/**
 * The config at a point (`?at=`): the log never holds its values (they may hold credentials), only the hash of the
 * version Cairn last wrote, when, and which top-level settings that write changed; all null before any write.
 */
const ConfigAt = Schema.Struct({ config: Schema.Null, hash: Schema.NullOr(Schema.String), writtenAt: Schema.NullOr(Schema.String), changedPaths: Schema.Array(Schema.String) })
const ConfigWritten = Schema.Struct({ success: Schema.Boolean, config: EngineConfig, hash: Schema.String })
/** The validator's verdict: each issue at a dotted path (`<root>` for the whole document), and what it printed. */
const ConfigChecked = Schema.Struct({
  valid: Schema.Boolean,
  issues: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String })),
  output: Schema.String
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const config = yield* RuntimeConfigService
    const agentsAt = yield* AgentsAt

    yield* agentRoute("GET", "/v0/agents/:agentId/config", {
      summary: "Read the agent's runtime config and its hash (or what the log holds of it at a point: `?at=`)",
      description: `${atDescription} At a point: \`{config: null, hash, writtenAt, changedPaths}\`, the hash of the version written through Cairn then, never a value.`,
      query: AtQuery,
      response: { schema: Schema.Union([ConfigRead, ConfigAt]) },
      errors: [new Agent.AgentNotFound({ agentId: "" }), new RuntimeConfig.FailedToReadConfig({ agentId: "" })]
    }, ({ principal, agentId, request }) => {
      const at = Kit.query(request, "at")
      return at === null
        ? Effect.map(config.read(principal, agentId), ({ config, hash }) => ({ config, hash }))
        : Effect.map(agentsAt.at(principal, agentId, at), ({ config }): typeof ConfigAt.Type => ({ config: null, ...config }))
    })

    yield* agentRoute("PUT", "/v0/agents/:agentId/config", { summary: "Write the agent's runtime config", body: { contentType: "application/json", description: "{config, baseHash?}" }, response: { schema: ConfigWritten }, errors: [new Agent.AgentNotFound({ agentId: "" }), new RuntimeConfig.InvalidJson({ detail: "" }), new RuntimeConfig.InvalidConfig({ issues: [] }), new RuntimeConfig.ConfigChangedSinceRead({ agentId: "" }), new RuntimeConfig.SettingsManagedByCairn({ paths: [] }), new RuntimeConfig.FailedToWriteConfig({ agentId: "" })] }, ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const written = yield* config.write(principal, agentId, yield* request.text)
        return { success: true, config: written.config, hash: written.hash }
      }))

    yield* agentRoute("POST", "/v0/agents/:agentId/config/validate", { summary: "Validate a runtime config with the engine's validator", body: { contentType: "application/json", description: "{config}" }, response: { schema: ConfigChecked }, errors: [new Agent.AgentNotFound({ agentId: "" }), new RuntimeConfig.InvalidJson({ detail: "" }), new RuntimeConfig.ValidationCommandFailed({ agentId: "" })] }, ({ principal, agentId, request }) =>
      Effect.gen(function*() {
        const { valid, issues, output } = yield* config.validate(principal, agentId, yield* request.text)
        return { valid, issues: issues.map((issue) => ({ path: issue.path, message: issue.message })), output }
      }))
  })
)
