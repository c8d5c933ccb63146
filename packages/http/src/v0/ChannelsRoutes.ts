/**
 * An agent's messaging channels: every channel's state (`GET …/channels`), configure one (`POST …/channels/{channel}`
 * `{botToken?, appToken?, dmPolicy?, allowFrom?, enabled?}`, an empty body allowed) and remove one (`DELETE`). The
 * channel name is checked before the body, so an unknown channel is `Unsupported channel` whatever was sent.
 */
import { Channels } from "@cairn/application"
import { Channel } from "@cairn/domain"
import { Effect, Schema } from "effect"
import { HttpRouter } from "effect/http"
import * as Kit from "./Kit.ts"

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { agentRoute } = yield* Kit.make(router)
    const channels = yield* Channels

    yield* agentRoute("GET", "/v0/agents/:agentId/channels", ({ principal, agentId }) => channels.list(principal, agentId))

    yield* agentRoute("POST", "/v0/agents/:agentId/channels/:channel", ({ principal, agentId, params, request, body }) =>
      Effect.gen(function*() {
        const channel = params["channel"] ?? ""
        yield* Effect.fromResult(Channel.requireChannel(channel))
        const input = (yield* request.text).trim() === "" ? undefined : yield* body(Schema.Unknown)
        const message = yield* channels.configure(principal, agentId, channel, input)
        return { success: true, message }
      }))

    yield* agentRoute("DELETE", "/v0/agents/:agentId/channels/:channel", ({ principal, agentId, params }) =>
      Effect.map(channels.remove(principal, agentId, params["channel"] ?? ""), (message) => ({ success: true, message })))
  })
)
