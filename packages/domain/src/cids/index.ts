/**
 * What the service knows of one CID on one network (stream `cid-<network>-<cid>`): who uploaded it first and
 * when, which workspaces hold live files of it, and its signature, with the rules for signing it.
 */
import type { Network } from "../Network.ts"
import type { Decider } from "../Decider.ts"
import type { CidCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { CidError } from "./Errors.ts"
import { CidEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type CidState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision, signableBy } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"

export const stream = (network: Network, cid: string) => `cid-${network}-${cid}`

export const decider: Decider<CidCommand, CidEvent, CidState, CidError> = { initial, decide, evolve, events: CidEvent }
