/**
 * An agent's `model` setting (`provider/model`, given at creation or by PATCH) as its gateway takes it: the runtime
 * config's `agents.defaults.model.primary`, written through the AgentEngine port (the running gateway, or its file
 * while stopped), on the config as read, so its redacted credentials go back as markers and keep their values. The
 * setting is applied before every start of the gateway and at once when it changes; an agent without one (`null`)
 * leaves the config's model alone.
 */
import { type AgentEngine, EngineChat } from "@cairn/agent-engine"
import { ValidationFailed } from "@cairn/domain"
import { Effect, Result } from "effect"

/** A model as `provider/model` (EngineChat.modelPattern), or 400. */
export const validateModel = (value: unknown): Result.Result<string, ValidationFailed> =>
  typeof value === "string" && EngineChat.modelPattern.test(value)
    ? Result.succeed(value)
    : Result.fail(new ValidationFailed({ detail: "model must be provider/model (e.g. openai/gpt-5)" }))

type Json = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The config with `model` as the agents' default model (its fallbacks kept), or without a primary model when `model`
 * is null; everything else as it was.
 */
export const withModel = (config: Json, model: string | null): Json => {
  const agents = isObject(config["agents"]) ? config["agents"] : {}
  const defaults = isObject(agents["defaults"]) ? agents["defaults"] : {}
  const current = defaults["model"]
  const { primary: _, ...rest } = isObject(current) ? current : {}
  const next = model === null ? rest : { ...rest, primary: model }
  const { model: _model, ...otherDefaults } = defaults
  const newDefaults = Object.keys(next).length === 0 ? otherDefaults : { ...otherDefaults, model: next }
  const { defaults: _defaults, ...otherAgents } = agents
  const newAgents = Object.keys(newDefaults).length === 0 ? otherAgents : { ...otherAgents, defaults: newDefaults }
  const { agents: _agents, ...others } = config
  return Object.keys(newAgents).length === 0 ? others : { ...others, agents: newAgents }
}

/**
 * Makes the agent's gateway answer with `model` by default (null: clears the primary model Cairn set). Nothing is
 * written when the config already says so. Fails as the engine's config read and write do.
 */
export const apply = (engine: AgentEngine["Service"], agentId: string, model: string | null) =>
  Effect.gen(function*() {
    const { config: current, hash } = yield* engine.readConfig(agentId)
    if ((EngineChat.configuredModel(current) ?? null) === model) return
    yield* engine.writeConfig(agentId, { config: withModel(current, model), baseHash: hash })
  })
