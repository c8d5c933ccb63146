/** Why a file command was refused. */
import { Schema } from "effect"

/** A wrong id, another workspace's file, a file on the other network, or a deleted one. */
export class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { fileId: Schema.String }) {
  readonly status = 404
  override readonly message = "File not found"
}

/** File ids are random; a second upload under the same id is refused rather than overwriting the first file. */
export class FileAlreadyExists extends Schema.TaggedError<FileAlreadyExists>()("FileAlreadyExists", { fileId: Schema.String }) {
  readonly status = 409
  override readonly message = "File already exists"
}

/**
 * The caller's workspace holds no live file of this CID on the network: what Pinata's legacy `unpin` and
 * `hashMetadata` answer for a hash the caller has not pinned.
 */
export class CidNotPinned extends Schema.TaggedError<CidNotPinned>()("CidNotPinned", { cid: Schema.String }) {
  readonly status = 404
  override readonly message = "Current user has not pinned the provided hash"
}

export type FileError = FileNotFound | FileAlreadyExists
