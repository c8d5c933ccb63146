/**
 * Library skills: folders with a SKILL.md a workspace keeps (registered from a stored CID, uploaded, or installed
 * from a hub) and attaches to agents, whose engines load them from `<workspace>/skills/<name>/`. Stream
 * `skill-<id>`; a name is unique in its workspace's library through the reservation stream `nameReservation`, so a
 * folder with a known name becomes that skill's next version.
 */
import type { Decider } from "../Decider.ts"
import type { SkillCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { SkillError } from "./Errors.ts"
import { SkillEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type SkillState } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision, visible } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"
export * from "./Validation.ts"

export const stream = (skillId: string) => `skill-${skillId}`

/** The reservation that keeps a skill's name unique in its workspace's library; its owner is the skill's id. */
export const nameReservation = (workspaceId: string, name: string) => `reservation-skill-name-${workspaceId}-${name}`

export const decider: Decider<SkillCommand, SkillEvent, SkillState, SkillError> = { initial, decide, evolve, events: SkillEvent }
