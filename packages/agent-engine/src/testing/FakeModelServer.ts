/**
 * A model provider for tests that talk to real agents offline: an OpenAI-compatible server on loopback
 * (`GET /v1/models`, `POST /v1/chat/completions`, plain and streamed) whose answer is deterministic: the last user message's words, then `, said the fake model`
 * and the last user message's text. It checks the API key it was given, and records what it was asked, so a test
 * can see the agent's request really reached it. An agent reaches it through the operator's allowance
 * (`AGENT_EGRESS_ALLOW=127.0.0.1:<port>`), configured as the provider `fakellm` (see `providerConfig`).
 */
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface FakeModelRequest {
  readonly model: string
  readonly stream: boolean
  /** The last user message's text as the provider got it (the agent may add context around the user's words). */
  readonly lastUserText: string
  readonly authorization: string | undefined
}

export interface FakeModelServer {
  readonly port: number
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseUrl: string
  readonly apiKey: string
  readonly requests: ReadonlyArray<FakeModelRequest>
  /** Holds every answer until `release` (a turn that takes too long). */
  hold(): void
  release(): void
  close(): Promise<void>
}

/** The model this server offers (it answers any model name alike; the provider config declares two). */
export const fakeModelId = "fake-1"
/** A second model of the provider, for a chat that names a model other than the agent's default. */
export const otherFakeModelId = "fake-2"

/** The reply to a user message's text. */
export const fakeReply = (userText: string) => `${userText}, said the fake model`

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((part) => (typeof part === "object" && part !== null && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "")).join("")
    : ""

/** OpenClaw adds a user message of its own after the user's (running sessions, subagents): not the user's words. */
const internalContext = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"

const lastUserText = (messages: unknown): string => {
  if (!Array.isArray(messages)) return ""
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as { role?: unknown; content?: unknown } | null
    if (message?.role !== "user") continue
    const text = textOf(message.content)
    if (!text.trimStart().startsWith(internalContext)) return usersWords(text)
  }
  return ""
}

/**
 * The user's words out of OpenClaw's envelope: it puts the time before them (`[Sat 2026-11-28 10:08 UTC] …`) and its
 * runtime line after (`\n\nRuntime: agent=main | …`).
 */
const usersWords = (text: string) => text.replace(/^\s*\[[^\]\n]{1,80}\]\s*/, "").split(/\n\nRuntime: /)[0]!.trim()

/** The reply split into the chunks a stream sends: words with their spaces. */
const chunks = (reply: string) => reply.match(/\S+\s*/g) ?? [reply]

/** Starts the server on a free loopback port. */
export const startFakeModelServer = async (options: { readonly apiKey?: string } = {}): Promise<FakeModelServer> => {
  const apiKey = options.apiKey ?? "fake-model-key"
  const requests: Array<FakeModelRequest> = []
  let held: Array<() => void> | undefined
  const afterHold = (go: () => void) => held === undefined ? go() : void held.push(go)

  const server = Http.createServer((request, response) => {
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" })
      response.end(JSON.stringify(body))
    }
    if (request.headers.authorization !== `Bearer ${apiKey}`) {
      request.resume()
      return json(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } })
    }
    if (request.method === "GET" && request.url === "/v1/models") {
      return json(200, { object: "list", data: [{ id: fakeModelId, object: "model", created: 0, owned_by: "cairn-tests" }] })
    }
    if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
      request.resume()
      return json(404, { error: { message: `no route ${request.method} ${request.url}` } })
    }
    const body: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => body.push(chunk))
    request.on("end", () => {
      let parsed: { model?: unknown; stream?: unknown; messages?: unknown }
      try {
        parsed = JSON.parse(Buffer.concat(body).toString("utf8"))
      } catch {
        return json(400, { error: { message: "the body is not JSON" } })
      }
      const userText = lastUserText(parsed.messages)
      const asked: FakeModelRequest = {
        model: typeof parsed.model === "string" ? parsed.model : "",
        stream: parsed.stream === true,
        lastUserText: userText,
        authorization: request.headers.authorization
      }
      requests.push(asked)
      const reply = fakeReply(userText)
      const usage = { prompt_tokens: 10, completion_tokens: chunks(reply).length, total_tokens: 10 + chunks(reply).length }
      const base = { id: `chatcmpl-${requests.length}`, created: Math.floor(Date.now() / 1000), model: asked.model || fakeModelId }
      afterHold(() => {
        if (!asked.stream) {
          return json(200, {
            ...base,
            object: "chat.completion",
            choices: [{ index: 0, message: { role: "assistant", content: reply }, finish_reason: "stop" }],
            usage
          })
        }
        response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        const send = (data: unknown) => response.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`)
        chunks(reply).forEach((piece, index) =>
          send({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: index === 0 ? { role: "assistant", content: piece } : { content: piece }, finish_reason: null }] })
        )
        send({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage })
        send("[DONE]")
        response.end()
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey,
    requests,
    hold: () => void (held ??= []),
    release: () => {
      const waiting = held ?? []
      held = undefined
      for (const go of waiting) go()
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * The OpenClaw config that makes `fakellm/fake-1` an agent's model: the provider, with its key read from the
 * gateway's environment (`FAKELLM_API_KEY`, a secret of the agent), and the agent's default model.
 */
export const providerConfig = (server: Pick<FakeModelServer, "baseUrl">) => ({
  models: {
    providers: {
      fakellm: {
        baseUrl: server.baseUrl,
        apiKey: "${FAKELLM_API_KEY}",
        api: "openai-completions",
        models: [fakeModelId, otherFakeModelId].map((id) => ({ id, name: id === fakeModelId ? "Fake model" : "Other fake model", contextWindow: 128_000, maxTokens: 4_096, input: ["text"], reasoning: false }))
      }
    }
  },
  agents: { defaults: { model: { primary: `fakellm/${fakeModelId}` } } }
})
