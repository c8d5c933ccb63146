/**
 * The engines and versions agents run on (Pinata's agents API): `GET /v0/agents/engines`, an agent's
 * `GET …/available-agent-versions`, and `GET`/`POST …/update` (a restart onto the version a tag names). The work is
 * EngineUpdates' (application).
 */
import { EngineUpdates } from "@cairn/application"
import { Agent } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

const EnginesWire = Schema.Struct({ engines: Schema.Array(Schema.Struct({ id: Schema.String, label: Schema.String })) })

const AvailableWire = Schema.Struct({
  engine: Schema.String,
  currentVersion: Schema.String,
  availableVersions: Schema.Array(Schema.String),
  availableVersionsPerEngine: Schema.Record(Schema.String, Schema.Array(Schema.String))
})

const UpdateCheckWire = Schema.Struct({ currentVersion: Schema.String, latestVersion: Schema.String, updateAvailable: Schema.Boolean })

const UpdateBody = Schema.Struct({ tag: Schema.optional(Schema.String.check(Schema.isNonEmpty())) })

const UpdatedWire = Schema.Struct({ success: Schema.Boolean, previousVersion: Schema.String, newVersion: Schema.String, output: Schema.String })

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { route, agentRoute } = yield* Kit.make(router)
    const updates = yield* EngineUpdates

    yield* route("GET", "/v0/agents/engines", { summary: "The engines agents run on", response: { schema: EnginesWire } }, () =>
      Effect.succeed({ engines: updates.engines }))

    yield* agentRoute("GET", "/v0/agents/:agentId/available-agent-versions", {
      summary: "The engine versions the agent can be restarted onto",
      response: { schema: AvailableWire },
      errors: [new Agent.AgentNotFound({ agentId: "" })]
    }, ({ principal, agentId }) =>
      Effect.map(updates.versionsOf(principal, agentId), (v) => ({
        engine: v.engine,
        currentVersion: v.currentVersion,
        availableVersions: v.availableVersions,
        availableVersionsPerEngine: { [v.engine]: v.availableVersions }
      })))

    yield* agentRoute("GET", "/v0/agents/:agentId/update", {
      summary: "Whether a newer engine release is available for the agent",
      response: { schema: UpdateCheckWire },
      errors: [new Agent.AgentNotFound({ agentId: "" })]
    }, ({ principal, agentId }) =>
      Effect.map(updates.versionsOf(principal, agentId), (v) => ({ currentVersion: v.currentVersion, latestVersion: v.latestVersion, updateAvailable: v.updateAvailable })))

    yield* agentRoute("POST", "/v0/agents/:agentId/update", {
      summary: "Restart the agent onto the engine version a tag names (`latest`, `beta`, or a version)",
      body: { schema: UpdateBody, optional: true },
      response: { schema: UpdatedWire },
      errors: [new Agent.AgentNotFound({ agentId: "" }), new Agent.InvalidVersion({ version: "" }), new Agent.RestartFailed({ agentId: "" })]
    }, ({ principal, agentId, request, body }) =>
      Effect.gen(function*() {
        // The body is optional: none updates to the latest release.
        const { tag } = (yield* request.text).trim() === "" ? {} : yield* body(UpdateBody)
        const outcome = yield* updates.update(principal, agentId, tag)
        return { success: true, ...outcome }
      }))
  })
)
