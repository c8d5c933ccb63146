/**
 * The free-space port: how many bytes may still be written on the disk that holds the data directory. The runtime's
 * adapter asks the file system (`statfs` on DATA_DIR, NodeFreeSpace); tests give a disk that runs low on demand.
 */
import { Context, Effect, Layer } from "effect"

export class FreeSpace extends Context.Service<FreeSpace, {
  /** The bytes an unprivileged writer may still write there; undefined when they cannot be measured. */
  readonly freeBytes: Effect.Effect<number | undefined>
}>()("cairn/FreeSpace") {
  /** A disk whose free bytes are whatever `freeBytes()` answers at each ask: a test makes it run low without filling one. */
  static readonly layerTest = (freeBytes: () => number | undefined): Layer.Layer<FreeSpace> =>
    Layer.succeed(FreeSpace, { freeBytes: Effect.sync(freeBytes) })
}
