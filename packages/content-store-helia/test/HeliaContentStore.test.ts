import { ContentStore } from "@cairn/content-store"
import { contentStoreContract, deterministicBytes } from "@cairn/content-store/testing"
import { HeliaContentStore } from "@cairn/content-store-helia"
import { assert, describe, it } from "@effect/vitest"
import { FsBlockstore } from "blockstore-fs"
import { Effect, Layer, Stream } from "effect"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import { sha256 } from "multiformats/hashes/sha2"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

/** A fresh data directory, removed with everything in it when the scope closes. */
const tempDataDir = Effect.acquireRelease(
  Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "cairn-helia-"))),
  (dataDir) => Effect.promise(() => fs.rm(dataDir, { recursive: true, force: true }))
)

contentStoreContract(
  "HeliaContentStore on the filesystem",
  Layer.unwrap(Effect.map(tempDataDir, (dataDir) => HeliaContentStore.layer({ dataDir })))
)

contentStoreContract("HeliaContentStore in memory", HeliaContentStore.layerMemory)

describe("HeliaContentStore on the filesystem", () => {
  it.effect("keeps content across closing and reopening the same data directory", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      const content = new TextEncoder().encode("still here after a restart")
      const { cid } = yield* ContentStore.use((store) => store.add(Stream.make(content), { network: "private" })).pipe(
        Effect.provide(HeliaContentStore.layer({ dataDir }))
      )
      const reopened = yield* ContentStore.use((store) =>
        Effect.all({ read: Stream.mkUint8Array(store.cat(cid, "private")), onPublic: store.has(cid, "public") })
      ).pipe(Effect.provide(HeliaContentStore.layer({ dataDir })))
      assert.deepStrictEqual(reopened, { read: content, onPublic: false })
    }))

  it.effect("fails with ContentNotFound, rather than waiting, when a file has lost one of its blocks", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDataDir
      const content = deterministicBytes(2 * 1_048_576 + 1)
      const firstLeaf = CID.create(1, raw.code, yield* Effect.promise(async () => sha256.digest(content.subarray(0, 1_048_576))))
      yield* Effect.gen(function*() {
        const store = yield* ContentStore
        const { cid } = yield* store.add(Stream.make(content), { network: "public" })
        yield* Effect.promise(() => new FsBlockstore(path.join(dataDir, "ipfs", "public")).delete(firstLeaf))
        const failures = [
          yield* Effect.flip(Stream.runDrain(store.cat(cid, "public"))),
          yield* Effect.flip(Stream.runDrain(store.car(cid, "public")))
        ]
        for (const failure of failures) assert.deepInclude(failure, { _tag: "ContentNotFound", cid, network: "public" })
      }).pipe(Effect.provide(HeliaContentStore.layer({ dataDir })), Effect.timeout("10 seconds"))
    }))
})
