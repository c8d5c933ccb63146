import { ContentStore } from "@cairn/content-store"
import { contentStoreContract, kuboVectors } from "@cairn/content-store/testing"
import { KuboContentStore } from "@cairn/content-store-kubo"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { createServer } from "node:net"

// KUBO_API_URL names a node to test against; KUBO_PRIVATE_API_URL a second one for the private network. With one
// node only, both networks share its blockstore and the separation test is skipped.
const publicApiUrl = process.env["KUBO_API_URL"] ?? ""
const privateApiUrl = process.env["KUBO_PRIVATE_API_URL"] ?? publicApiUrl

const node = publicApiUrl === "" ? "a Kubo node (skipped: KUBO_API_URL is not set)"
  : privateApiUrl === publicApiUrl ? publicApiUrl
  : `${publicApiUrl} and ${privateApiUrl}`

describe.runIf(publicApiUrl !== "")(`KuboContentStore on ${node}`, () => {
  contentStoreContract("KuboContentStore", KuboContentStore.layer({ publicApiUrl, privateApiUrl }), {
    networksAreSeparate: privateApiUrl !== publicApiUrl
  })
})

/** The URL of a loopback port nothing listens on. */
const closedPortUrl = Effect.callback<string>((resume) => {
  const server = createServer().listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(`http://127.0.0.1:${port}`)))
  })
})

describe("KuboContentStore when its node cannot be reached", () => {
  it.effect("fails every operation with ContentStoreUnavailable", () =>
    Effect.gen(function*() {
      const url = yield* closedPortUrl
      const cid = kuboVectors[0]!.cid
      const failures = yield* ContentStore.use((store) =>
        Effect.all([
          Effect.flip(store.add(Stream.make(new Uint8Array([1])), { network: "public" })),
          Effect.flip(store.has(cid, "private")),
          Effect.flip(Stream.runDrain(store.cat(cid, "public"))),
          Effect.flip(store.block(cid, "private")),
          Effect.flip(Stream.runDrain(store.car(cid, "public"))),
          Effect.flip(store.addDirectory([{ path: "a/b.txt", content: new Uint8Array([1]) }], { network: "private" })),
          Effect.flip(store.walk(cid, "public"))
        ])
      ).pipe(Effect.provide(KuboContentStore.layer({ publicApiUrl: url, privateApiUrl: url })))
      assert.deepStrictEqual(failures.map((failure) => failure._tag), Array(7).fill("ContentStoreUnavailable"))
    }))
})
