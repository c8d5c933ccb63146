/**
 * KuboSnapshotStore against a stand-in for Kubo's RPC API on loopback (KuboStandIn), which runs the whole contract
 * and shows what is sent: blocks in batches, offline reads, named pins for garbage collection. The real node runs
 * the contract when KUBO_API_URL is set (KUBO_PRIVATE_API_URL, when given, names the private node).
 */
import { SnapshotStore, type TreeEntry } from "@cairn/content-store"
import { snapshotStoreContract } from "@cairn/content-store/testing"
import { KuboSnapshotStore } from "@cairn/content-store-kubo"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, type Scope, Stream } from "effect"
import { createServer } from "node:net"
import { type KuboStandIn, kuboStandIn } from "./KuboStandIn.ts"

const apiUrl = process.env["KUBO_PRIVATE_API_URL"] ?? process.env["KUBO_API_URL"] ?? ""

snapshotStoreContract(
  "KuboSnapshotStore against a stand-in for Kubo's RPC API",
  Layer.unwrap(Effect.map(kuboStandIn, (kubo) => KuboSnapshotStore.layer({ privateApiUrl: kubo.url })))
)

describe.runIf(apiUrl !== "")(`KuboSnapshotStore on ${apiUrl === "" ? "a Kubo node (skipped: KUBO_API_URL is not set)" : apiUrl}`, () => {
  snapshotStoreContract("KuboSnapshotStore", KuboSnapshotStore.layer({ privateApiUrl: apiUrl }))
})

const text = (value: string) => new TextEncoder().encode(value)
const file = (path: string, content: string): TreeEntry => ({ path, kind: "file", mode: 0o644, source: { content: Stream.make(text(content)) } })

const withStore = <A, E>(
  f: (store: SnapshotStore["Service"], kubo: KuboStandIn) => Effect.Effect<A, E>
): Effect.Effect<A, E, Scope.Scope> =>
  Effect.gen(function*() {
    const kubo = yield* kuboStandIn
    return yield* SnapshotStore.use((store) => f(store, kubo)).pipe(
      Effect.provide(KuboSnapshotStore.layer({ privateApiUrl: kubo.url }))
    )
  })

describe("KuboSnapshotStore, against a stand-in for Kubo's RPC API", () => {
  it.effect("puts blocks in batches, one block/put per codec with many file parts, unpinned, sha2-256", () =>
    withStore((store, kubo) =>
      Effect.gen(function*() {
        const files = Array.from({ length: 300 }, (_, i) => file(`dir-${i % 3}/file-${i}.txt`, `file ${i}\n`))
        yield* store.importTree(files)
        const puts = kubo.calls.filter((call) => call.command === "block/put")
        // 300 raw leaves and 4 directories, in batches of at most 256 blocks.
        assert.deepStrictEqual(puts.map((call) => [call.params.get("cid-codec"), call.parts.length]), [["raw", 256], ["raw", 44], ["dag-pb", 4]])
        for (const put of puts) {
          assert.deepInclude(Object.fromEntries(put.params), { mhtype: "sha2-256", pin: "false", "allow-big-block": "true" })
        }
      })))

  it.effect("reads blocks offline, so a block the node lacks is never searched for", () =>
    withStore((store, kubo) =>
      Effect.gen(function*() {
        const { cid } = yield* store.importTree([file("a/b.txt", "b\n")])
        kubo.calls.length = 0
        yield* store.readTree(cid)
        yield* Stream.runDrain(store.car(cid))
        yield* store.has(cid)
        const reads = kubo.calls.filter((call) => ["block/get", "block/stat"].includes(call.command))
        assert.isAbove(reads.length, 0)
        assert.isTrue(reads.every((call) => call.params.get("offline") === "true"))
      })))

  it.effect("pins each tree as it is stored; collecting unpins its stale ones, leaves other pins, runs repo/gc", () =>
    withStore((store, kubo) =>
      Effect.gen(function*() {
        const old = yield* store.importTree([file("old.txt", "old\n")])
        const kept = yield* store.importTree([file("kept.txt", "kept\n")])
        const users = yield* store.importTree([file("users.txt", "a user's own pin\n")])
        const dropped = yield* store.importTree([file("dropped.txt", "dropped\n")])
        // Pinned at import: a repo/gc run by anyone else before the next collection keeps them.
        for (const tree of [old, kept, users, dropped]) assert.strictEqual(kubo.pins.get(tree.cid), KuboSnapshotStore.pinName)
        kubo.pins.set(users.cid, "a user's")
        kubo.pins.delete(kept.cid)
        kubo.calls.length = 0

        const { blocksRemoved } = yield* store.collectGarbage([kept.cid])

        assert.deepStrictEqual(Object.fromEntries(kubo.pins), { [kept.cid]: "cairn-snapshot", [users.cid]: "a user's" })
        const calls = kubo.calls.map((call) => [call.command, call.params.get("arg"), call.params.get("name")])
        assert.deepStrictEqual(calls.slice(0, 2), [["pin/ls", null, null], ["pin/add", kept.cid, "cairn-snapshot"]])
        assert.sameDeepMembers(calls.slice(2, 4), [["pin/rm", old.cid, null], ["pin/rm", dropped.cid, null]])
        assert.deepStrictEqual(calls.slice(4), [["repo/gc", null, null]])
        assert.deepInclude(Object.fromEntries(kubo.calls[0]!.params), { type: "recursive", names: "true" })
        assert.deepInclude(Object.fromEntries(kubo.calls[1]!.params), { recursive: "true", offline: "true" })
        // The old and dropped trees: a directory and a file each.
        assert.strictEqual(blocksRemoved, 4)
        for (const cid of [old.cid, dropped.cid]) assert.isFalse(yield* store.has(cid))
        for (const cid of [kept.cid, users.cid]) assert.isTrue(yield* store.has(cid))

        // Pinned already: nothing to add, nothing to remove.
        kubo.calls.length = 0
        yield* store.collectGarbage([kept.cid])
        assert.deepStrictEqual(kubo.calls.map((call) => call.command), ["pin/ls", "repo/gc"])
      })))
})

/** The URL of a loopback port nothing listens on. */
const closedPortUrl = Effect.callback<string>((resume) => {
  const server = createServer().listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(`http://127.0.0.1:${port}`)))
  })
})

describe("KuboSnapshotStore when its node cannot be reached", () => {
  it.effect("fails every operation with ContentStoreUnavailable", () =>
    Effect.gen(function*() {
      const url = yield* closedPortUrl
      const cid = "bafybeiczsscdsbs7ffqz55asqdf3smv6klcw3gofszvwlyarci47bgf354"
      const failures = yield* SnapshotStore.use((store) =>
        Effect.all([
          Effect.flip(store.importTree([file("a.txt", "a")])),
          Effect.flip(store.importTree([{ path: "b.txt", kind: "file", mode: 0o644, source: { cid: "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku" } }])),
          Effect.flip(store.readTree(cid)),
          Effect.flip(Stream.runDrain(store.cat(cid))),
          Effect.flip(Stream.runDrain(store.car(cid))),
          Effect.flip(store.has(cid)),
          Effect.flip(store.collectGarbage([cid]))
        ])
      ).pipe(Effect.provide(KuboSnapshotStore.layer({ privateApiUrl: url })))
      assert.deepStrictEqual(failures.map((failure) => failure._tag), Array(7).fill("ContentStoreUnavailable"))
    }))
})
