/**
 * The free-space reserve Cairn keeps for itself on the disk of its data directory (`DISK_RESERVE`, 1 GiB by default;
 * 0 turns it off). A use case that writes content on a user's request (a file upload, an agent's file, a workspace
 * snapshot) asks `ensureRoom(bytes)` before it writes anything, with the bytes it will add when it knows them (0
 * otherwise), and is refused with 507 `Insufficient storage` below the reserve (the domain's rule, DiskSpace.ts).
 * The refusal's numbers go to the log, never the content. Free space that cannot be measured refuses nothing.
 */
import { DiskSpace } from "@cairn/domain"
import { Context, Effect, Layer, Result } from "effect"
import { FreeSpace } from "./FreeSpace.ts"

export const defaultDiskReserveBytes = 1024 ** 3

/** The reserve in bytes; the runtime sets it from DISK_RESERVE. */
export const DiskReserveBytes = Context.Reference<number>("cairn/DiskReserveBytes", { defaultValue: () => defaultDiskReserveBytes })

export class DiskReserve extends Context.Service<DiskReserve>()("cairn/DiskReserve", {
  make: Effect.gen(function*() {
    const space = yield* FreeSpace
    const reserveBytes = yield* DiskReserveBytes

    /** Fails with InsufficientStorage when writing `bytes` more would leave the disk at or below the reserve. */
    const ensureRoom = (bytes: number): Effect.Effect<void, DiskSpace.InsufficientStorage> =>
      reserveBytes <= 0 ? Effect.void : Effect.flatMap(space.freeBytes, (freeBytes) => {
        if (freeBytes === undefined) return Effect.void
        const checked = DiskSpace.check({ freeBytes, reserveBytes }, bytes)
        return Result.isSuccess(checked) ? Effect.void : Effect.logWarning(
          `Refused a write of ${bytes > 0 ? `${bytes} bytes` : "unknown size"}: ${freeBytes} bytes free on the data directory's disk, ` +
            `${reserveBytes} kept in reserve (DISK_RESERVE)`
        ).pipe(Effect.andThen(Effect.fail(checked.failure)))
      })

    return {
      ensureRoom,
      /** The free bytes now (for /metrics); undefined when they cannot be measured. */
      freeBytes: space.freeBytes,
      reserveBytes
    }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
