/**
 * Pin-by-CID jobs (`/v3/files/{network}/pin_by_cid`, and the IPFS Pinning Service API's pins): a CID to fetch from
 * the configured sources, every block checked against its CID, then recorded as a file. Stream `pin-job-<id>`.
 */
import type { Decider } from "../Decider.ts"
import type { PinJobCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { PinJobError } from "./Errors.ts"
import { PinJobEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type PinJobState } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"

export const stream = (jobId: string) => `pin-job-${jobId}`

export const decider: Decider<PinJobCommand, PinJobEvent, PinJobState, PinJobError> = { initial, decide, evolve, events: PinJobEvent }
