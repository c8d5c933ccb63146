/**
 * The limits on what is done inside an agent's workspace through the API: how long a console command may run and
 * how much of each output stream is kept, how big an upload may be (decoded) and how big a file may be read back.
 * The runtime sets them from the environment (CONSOLE_TIMEOUT_MS, CONSOLE_MAX_OUTPUT_BYTES, UPLOAD_MAX_BYTES,
 * FILE_READ_MAX_BYTES; docs/operations.md); these defaults apply otherwise.
 */
import { Context } from "effect"

export interface WorkspaceLimitValues {
  /** A console command's process group is killed after this long (30 s). */
  readonly consoleTimeoutMs: number
  /** Each of a command's stdout and stderr is kept up to this many bytes (1 MiB). */
  readonly consoleMaxOutputBytes: number
  /** An upload's decoded content, at most (25 MiB). */
  readonly uploadMaxBytes: number
  /** A workspace file read through `GET …/files`, at most (10 MiB). */
  readonly fileReadMaxBytes: number
}

export const defaultWorkspaceLimits: WorkspaceLimitValues = {
  consoleTimeoutMs: 30_000,
  consoleMaxOutputBytes: 1024 * 1024,
  uploadMaxBytes: 25 * 1024 * 1024,
  fileReadMaxBytes: 10 * 1024 * 1024
}

export const WorkspaceLimits = Context.Reference<WorkspaceLimitValues>("cairn/WorkspaceLimits", { defaultValue: () => defaultWorkspaceLimits })
