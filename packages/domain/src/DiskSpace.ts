/**
 * The free-space reserve Cairn keeps for itself on the disk that holds its data directory (`DISK_RESERVE`): content
 * written on a user's request is allowed only while the disk's free bytes, less the bytes about to be written, stay
 * above the reserve, so a tenant filling the disk never takes the room Cairn's own database and files need. A reserve
 * of 0 turns the rule off. Pure: the caller measures the free bytes (the application's FreeSpace port).
 */
import { Result, Schema } from "effect"

/**
 * A write refused because it would leave the disk below the reserve: 507 `Insufficient storage`. The numbers are
 * for the log; the client sees only the message.
 */
export class InsufficientStorage extends Schema.TaggedError<InsufficientStorage>()("InsufficientStorage", {
  freeBytes: Schema.Number,
  reserveBytes: Schema.Number,
  /** What the refused write would have added (0 when its size is not known up front). */
  bytes: Schema.Number
}) {
  readonly status = 507
  override readonly message = "Insufficient storage"
}

/** The disk as measured now: its free bytes and the reserve kept on it. */
export interface Space {
  readonly freeBytes: number
  readonly reserveBytes: number
}

/**
 * Whether `bytes` more may be written: the free bytes less `bytes` must stay above the reserve (so a write of
 * unknown size, checked with 0, needs more free than the reserve). A reserve of 0 or less allows everything.
 */
export const check = (space: Space, bytes: number): Result.Result<void, InsufficientStorage> => {
  const { freeBytes, reserveBytes } = space
  if (!(reserveBytes > 0)) return Result.void
  const adding = bytes > 0 ? bytes : 0
  return freeBytes - adding > reserveBytes ? Result.void : Result.fail(new InsufficientStorage({ freeBytes, reserveBytes, bytes: adding }))
}
