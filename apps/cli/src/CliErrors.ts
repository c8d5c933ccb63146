/**
 * How the admin CLI fails, each with the line `cairn: …` prints and its exit code (`Runtime.errorExitCode`, read
 * by `Main.reportFailure`): 1 when the server (or a check) refused, 2 for a command line that cannot work, 3 when
 * the server cannot be reached. The parser's own refusals (unknown command or flag) exit 2 as well.
 */
import { Runtime, Schema } from "effect"

/** The server answered with an error: its `error` string and status, as it sent them. */
export class ServerRefused extends Schema.TaggedError<ServerRefused>()("ServerRefused", {
  status: Schema.Number,
  error: Schema.String,
  method: Schema.String,
  path: Schema.String
}) {
  override readonly [Runtime.errorExitCode] = 1

  override get message() {
    const hint = this.status === 401
      ? "\n  The admin token is ADMIN_TOKEN, or DATA_DIR/admin-token (DATA_DIR as the server's): it must be the server's."
      : ""
    return `${this.error} (HTTP ${this.status} from ${this.method} ${this.path})${hint}`
  }
}

/** Nothing answered at `url` (refused, unknown host, reset): the server is down or elsewhere. */
export class ServerUnreachable extends Schema.TaggedError<ServerUnreachable>()("ServerUnreachable", {
  url: Schema.String,
  reason: Schema.String
}) {
  override readonly [Runtime.errorExitCode] = 3

  override get message() {
    return `cannot connect to the Cairn server at ${this.url} (${this.reason}).\n` +
      "  Is it running? Start it with `npm start` in the Cairn directory, or export CAIRN_URL=<the address it listens on>."
  }
}

/** A value on the command line (or CAIRN_URL) that cannot work, found before anything was asked of the server. */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  detail: Schema.String
}) {
  override readonly [Runtime.errorExitCode] = 2

  override get message() {
    return this.detail
  }
}

/** Something the CLI checked itself and refused (a template folder that is not valid, say). */
export class Refused extends Schema.TaggedError<Refused>()("Refused", {
  detail: Schema.String
}) {
  override readonly [Runtime.errorExitCode] = 1

  override get message() {
    return this.detail
  }
}
