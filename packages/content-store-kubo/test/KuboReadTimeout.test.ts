/**
 * A Kubo node that takes a request and never answers (stuck, or searching for a block despite `offline`) must not
 * hold a read open forever: every read fails with ContentTimeout once `readTimeout` has passed. The node is a
 * loopback HTTP server that accepts every request and answers none.
 */
import { ContentStore } from "@cairn/content-store"
import { kuboVectors } from "@cairn/content-store/testing"
import { KuboContentStore } from "@cairn/content-store-kubo"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { createServer } from "node:http"

/** The URL of a loopback HTTP server that never answers; closed (with its hanging connections) when the scope ends. */
const silentNode = Effect.acquireRelease(
  Effect.callback<{ readonly url: string; readonly close: () => void }>((resume) => {
    const server = createServer(() => {})
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(Effect.succeed({
        url: `http://127.0.0.1:${port}`,
        close: () => {
          server.closeAllConnections()
          server.close()
        }
      }))
    })
  }),
  (node) => Effect.sync(node.close)
)

describe("KuboContentStore when its node never answers", () => {
  // The real clock: the reads wait on real sockets, and the limit is what ends them.
  it.live("fails every read with ContentTimeout, naming the command, the CID and the limit", () =>
    Effect.scoped(Effect.gen(function*() {
      const node = yield* silentNode
      const cid = kuboVectors[0]!.cid
      const failures = yield* ContentStore.use((store) =>
        Effect.all([
          Effect.flip(store.has(cid, "private")),
          Effect.flip(Stream.runDrain(store.cat(cid, "public"))),
          Effect.flip(store.block(cid, "private")),
          Effect.flip(Stream.runDrain(store.car(cid, "public"))),
          Effect.flip(store.walk(cid, "public"))
        ], { concurrency: "unbounded" })
      ).pipe(Effect.provide(KuboContentStore.layer({ publicApiUrl: node.url, privateApiUrl: node.url, readTimeout: "100 millis" })))
      assert.deepStrictEqual(
        failures.map((failure) => failure._tag === "ContentTimeout" ? [failure.operation, failure.cid, failure.timeoutMillis, failure.status] : failure._tag),
        [["block/stat", cid, 100, 504], ["cat", cid, 100, 504], ["block/get", cid, 100, 504], ["dag/export", cid, 100, 504], ["files/stat", cid, 100, 504]]
      )
    })))
})
