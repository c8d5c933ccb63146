/** Reads `openclaw skills list --json` (reference features §4) into the port's EngineSkill shape. */
import type { EngineSkill } from "@cairn/agent-engine"
import { Effect, Schema } from "effect"

/** The parts of a listed skill the port exposes; the rest (description, missing requirements, …) is ignored. */
const RawSkill = Schema.Struct({ name: Schema.String, source: Schema.String, eligible: Schema.Boolean })
const SkillList = Schema.Struct({ skills: Schema.Array(RawSkill) })
const decodeSkillList = Schema.decodeUnknownEffect(Schema.fromJsonString(SkillList))

/**
 * OpenClaw's word for the agent's own `<workspace>/skills` is `openclaw-workspace`; the port's is `workspace`. Every
 * other source (`openclaw-bundled`, `openclaw-custodian`, `openclaw-extra`, …) is passed on as the engine says it.
 */
export const toSource = (source: string) => (source === "openclaw-workspace" ? "workspace" : source)

/** Parses the CLI's output, which may print notices before its JSON document; fails with a description. */
export const parseSkillList = (stdout: string): Effect.Effect<ReadonlyArray<EngineSkill>, string> => {
  const json = stdout.slice(Math.max(0, stdout.search(/^\{/m)))
  return decodeSkillList(json).pipe(
    Effect.map((list) => list.skills.map((skill) => ({ name: skill.name, source: toSource(skill.source), eligible: skill.eligible }))),
    Effect.mapError((issue) => `unexpected output (${issue}): ${stdout.slice(0, 1_000)}`)
  )
}
