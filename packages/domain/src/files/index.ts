/**
 * Files: content on one network, owned by one workspace, with a name, key-values and an optional group. Stream
 * `file-<id>`. A file of another workspace, or looked up on the other network, is simply not found.
 */
import type { Decider } from "../Decider.ts"
import type { FileCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { FileError } from "./Errors.ts"
import { FileEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type FileState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision, visible } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./State.ts"

export const stream = (fileId: string) => `file-${fileId}`

export const decider: Decider<FileCommand, FileEvent, FileState, FileError> = { initial, decide, evolve, events: FileEvent }
