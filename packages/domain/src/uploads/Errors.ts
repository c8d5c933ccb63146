/** How uploads into an agent's workspace and reads of its files are refused (service interface, section 7). */
import { Schema } from "effect"

/** An upload (its body or its decoded content) or a file to read over the size limit. */
export class FileTooLarge extends Schema.TaggedError<FileTooLarge>()("FileTooLarge", {
  /** The limit in bytes, for the log. */
  maxBytes: Schema.Number
}) {
  readonly status = 413
  override readonly message = "File too large"
}

/** No regular file at the path read (or one only reachable through a symlink leading out of the workspace). */
export class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {
  readonly status = 404
  override readonly message = "File not found"
}

/** A record of an upload is never refused. */
export type UploadError = never
