/**
 * Files uploaded into an agent's workspace (`uploads/<filename>`), each recorded for audit (name, size, SHA-256;
 * never the content), and the rules for reading a workspace file back. Stream `uploads-<agentId>`, part of the
 * agent's audit trail (agents/AuditStreams.ts).
 */
import type { Decider } from "../Decider.ts"
import type { UploadCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { UploadError } from "./Errors.ts"
import { UploadEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { initial, type UploadState } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"
export * from "./Validation.ts"

export const stream = (agentId: string) => `uploads-${agentId}`

export const decider: Decider<UploadCommand, UploadEvent, UploadState, UploadError> = { initial, decide, evolve, events: UploadEvent }
