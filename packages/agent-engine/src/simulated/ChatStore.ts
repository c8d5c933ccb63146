/**
 * The simulated engine's chat: what one agent's gateway keeps of its conversations (sessions, each with its model
 * and messages) and how it answers. The answer is deterministic (`Echo: <message>`), written as a few deltas (one
 * per word), and counted in tokens by words. The model a chat names is the session's from then on; the agent's
 * default comes from its runtime config (`agents.defaults.model.primary`, or a plain `agents.defaults.model`), else
 * `defaultModel`. The models offered are a fixed catalog plus those the config's `models.providers` declare; a model
 * can answer where its provider is the simulation's own or has an `apiKey` in the config.
 */
import { type ChatMessage, type ChatReply, type ChatSession, configuredModel, type EngineModel, type EngineModels } from "../Chat.ts"

/** The model a simulated agent answers with when neither the chat nor its config names one. */
export const defaultModel = "simulated/echo-1"

/** The models every simulated gateway knows, whatever its config. */
export const catalog: ReadonlyArray<{ readonly id: string; readonly name: string }> = [
  { id: "simulated/echo-1", name: "Echo 1" },
  { id: "simulated/echo-2", name: "Echo 2" },
  { id: "openai/gpt-5", name: "GPT-5" },
  { id: "anthropic/claude-sonnet-4-5", name: "Claude Sonnet 4.5" }
]

/** The provider the simulation answers with itself: it needs no credential. */
export const builtInProvider = "simulated"

interface Session {
  readonly sessionKey: string
  model: string
  title: string | undefined
  updatedAt: string
  /** Bumped on each change: orders sessions changed within the same millisecond. */
  touched: number
  readonly messages: Array<ChatMessage>
}

type Json = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const at = (path: ReadonlyArray<string>, config: unknown): unknown =>
  path.reduce<unknown>((value, key) => (isObject(value) ? value[key] : undefined), config)

/** The models the gateway offers with this config, the fixed catalog first. */
export const modelsOf = (config: Json): EngineModels => {
  const providers = at(["models", "providers"], config)
  const hasKey = (provider: string) => {
    if (provider === builtInProvider) return true
    const apiKey = at([provider, "apiKey"], providers)
    return (typeof apiKey === "string" && apiKey !== "") || isObject(apiKey)
  }
  const models = new Map<string, EngineModel>()
  const add = (provider: string, modelId: string, name: string) => {
    const available = hasKey(provider)
    models.set(`${provider}/${modelId}`, {
      id: `${provider}/${modelId}`,
      name,
      provider,
      available,
      ...(available ? {} : { unavailableReason: "missing-auth" })
    })
  }
  for (const model of catalog) {
    const slash = model.id.indexOf("/")
    add(model.id.slice(0, slash), model.id.slice(slash + 1), model.name)
  }
  if (isObject(providers)) {
    for (const [provider, settings] of Object.entries(providers)) {
      const declared = at(["models"], settings)
      if (!Array.isArray(declared)) continue
      for (const model of declared) {
        const id = typeof model === "string" ? model : at(["id"], model)
        if (typeof id !== "string" || id === "") continue
        const name = at(["name"], model)
        add(provider, id, typeof name === "string" && name !== "" ? name : id)
      }
    }
  }
  return { defaultModel: configuredModel(config) ?? defaultModel, models: [...models.values()] }
}

/** The reply to `message`, and the deltas it is written in (which add up to it). */
export const answer = (message: string): { readonly reply: string; readonly deltas: ReadonlyArray<string> } => {
  const reply = `Echo: ${message}`
  return { reply, deltas: reply.match(/\s*\S+\s*/g) ?? [reply] }
}

const words = (text: string) => text.split(/\s+/).filter((word) => word !== "").length

/** The sessions of one agent's gateway: kept as long as the agent (its gateway's store outlives restarts). */
export class ChatStore {
  private readonly sessions = new Map<string, Session>()
  private touches = 0
  private keys = 0

  /** A key no session of this agent has. */
  newKey(): string {
    let key: string
    do key = `cairn-${(++this.keys).toString().padStart(4, "0")}`
    while (this.sessions.has(key))
    return key
  }

  /** The model a turn in `sessionKey` answers with: the one asked for, else the session's, else the default. */
  modelFor(sessionKey: string, requested: string | undefined, fallback: string): string {
    return requested ?? this.sessions.get(sessionKey)?.model ?? fallback
  }

  /** Records the user's message (opening the session if new) at `at` (ISO 8601). */
  userSaid(sessionKey: string, model: string, text: string, at: string): void {
    const session = this.sessions.get(sessionKey) ?? {
      sessionKey,
      model,
      title: [...text.trim()].slice(0, 60).join("") || undefined,
      updatedAt: at,
      touched: 0,
      messages: []
    }
    session.model = model
    session.messages.push({ role: "user", text, at })
    this.touch(session, at)
    this.sessions.set(sessionKey, session)
  }

  /** Records the agent's reply; the whole turn's result. */
  agentSaid(sessionKey: string, message: string, reply: string, at: string): ChatReply {
    const session = this.sessions.get(sessionKey)!
    session.messages.push({ role: "assistant", text: reply, at })
    this.touch(session, at)
    const inputTokens = words(message)
    const outputTokens = words(reply)
    return { reply, sessionKey, model: session.model, usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens } }
  }

  /** Most recently changed first. */
  list(): ReadonlyArray<ChatSession> {
    return [...this.sessions.values()]
      .sort((a, b) => b.touched - a.touched)
      .map((session) => ({
        sessionKey: session.sessionKey,
        ...(session.title === undefined ? {} : { title: session.title }),
        updatedAt: session.updatedAt,
        model: session.model
      }))
  }

  /** The session's last `limit` messages, oldest first; undefined for a session it does not have. */
  history(sessionKey: string, limit: number): ReadonlyArray<ChatMessage> | undefined {
    const session = this.sessions.get(sessionKey)
    if (session === undefined) return undefined
    return limit <= 0 ? [] : session.messages.slice(-limit).map((message) => ({ ...message }))
  }

  private touch(session: Session, at: string) {
    session.updatedAt = at
    session.touched = ++this.touches
  }
}
