/**
 * The template catalog: agent templates (a manifest and workspace files, stored as one IPFS directory) that
 * workspaces publish for themselves and operators and Cairn publish for everyone. Stream `template-<id>`; a slug
 * is unique across the catalog, for good, through the reservation stream `slugReservation`.
 */
import type { Decider } from "../Decider.ts"
import type { TemplateCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { TemplateError } from "./Errors.ts"
import { TemplateEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type TemplateState } from "./State.ts"

export * from "./Commands.ts"
export { canChange, canSee, decide, type Decision, visible } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./Slug.ts"
export * from "./State.ts"

export const stream = (templateId: string) => `template-${templateId}`

/** The reservation that keeps a slug unique across the catalog; its owner is the template's id. */
export const slugReservation = (slug: string) => `reservation-template-slug-${slug}`

export const decider: Decider<TemplateCommand, TemplateEvent, TemplateState, TemplateError> = { initial, decide, evolve, events: TemplateEvent }
