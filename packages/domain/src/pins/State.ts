/** A pin job as its history leaves it. `prechecking` is a queued job; only `retrieving` ones hold blocks in flight. */
import type { PinJobQueued } from "./Events.ts"

export type PinJobStatus = "prechecking" | "retrieving" | "pinned" | "failed" | "cancelled"

export type PinJobState =
  | { readonly _tag: "NoJob" }
  | {
    readonly _tag: "Job"
    readonly queued: PinJobQueued
    readonly status: PinJobStatus
    /** The node whose worker has it (absent on jobs recorded before nodes were: any node's then). */
    readonly node?: string
    readonly reason?: string
    readonly fileId?: string
  }

export const initial: PinJobState = { _tag: "NoJob" }

/** Whether the job is still to be (or being) worked on. */
export const isOpen = (status: PinJobStatus) => status === "prechecking" || status === "retrieving"
