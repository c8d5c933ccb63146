/**
 * API keys: a JWT Cairn signed for one user of one workspace with a set of scopes. The key's stream (`key-<id>`)
 * records its issue, its uses when it has a limit, and its revocation; a revoked or spent key is refused even while
 * its JWT is valid.
 */
import type { Decider } from "../Decider.ts"
import type { ApiKeyCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { ApiKeyError } from "./Errors.ts"
import { ApiKeyEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type ApiKeyState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./Permissions.ts"
export * from "./State.ts"

export const stream = (keyId: string) => `key-${keyId}`

export const decider: Decider<ApiKeyCommand, ApiKeyEvent, ApiKeyState, ApiKeyError> = { initial, decide, evolve, events: ApiKeyEvent }
