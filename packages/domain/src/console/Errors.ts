/** How a console command is refused or fails (service interface, section 7). */
import { Schema } from "effect"

/** An empty or malformed `command`, or a `cwd` that is malformed or leads out of the workspace. */
export class InvalidCommand extends Schema.TaggedError<InvalidCommand>()("InvalidCommand", {
  /** Why, for the log; the body says only `Invalid command`. */
  reason: Schema.String
}) {
  readonly status = 400
  override readonly message = "Invalid command"
}

/** The command could not be started (the shell or the sandbox would not spawn). */
export class ExecutionFailed extends Schema.TaggedError<ExecutionFailed>()("ExecutionFailed", { agentId: Schema.String }) {
  readonly status = 500
  override readonly message = "Execution failed"
}

/** A record of the console is never refused. */
export type ConsoleError = never
