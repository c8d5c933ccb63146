/**
 * Workspace secrets: credentials users keep sealed in Cairn and attach to agents, whose gateways get them as
 * environment variables. Stream `secret-<id>`; a name is unique in its workspace through the reservation stream
 * `secretName`.
 */
import type { Decider } from "../Decider.ts"
import type { SecretCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { SecretError } from "./Errors.ts"
import { SecretEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type SecretState } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision, visible } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./Providers.ts"
export * from "./State.ts"
export * from "./Validation.ts"

export const stream = (secretId: string) => `secret-${secretId}`

/** The reservation that keeps a secret's name unique in its workspace. */
export const nameReservation = (workspaceId: string, name: string) => `reservation-secret-name-${workspaceId}-${name}`

/**
 * What a sealed value is bound to: a ciphertext copied onto another secret, another workspace or another version
 * of the same secret fails to open.
 */
export const associatedData = (workspaceId: string, secretId: string, version: number) =>
  `cairn/secret/v1\u0000${workspaceId}\u0000${secretId}\u0000${version}`

export const decider: Decider<SecretCommand, SecretEvent, SecretState, SecretError> = { initial, decide, evolve, events: SecretEvent }
