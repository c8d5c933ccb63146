/**
 * The SnapshotStore port on one Kubo node's RPC API: the private node, which has no gateway and no networking.
 * Trees are built, listed and exported by HeliaSnapshotStore's code over Kubo's blocks (KuboBlockstore), so a tree
 * here has the CID it has there. Kubo collects garbage itself: `collectGarbage` pins every live root under the name
 * `cairn-snapshot` (each tree is pinned so as soon as it is stored), unpins the `cairn-snapshot` pins no longer
 * live, then runs `repo/gc`. Pins of any other name
 * (the private files KuboContentStore adds) are never touched, and keep their blocks.
 */
import { ContentStoreUnavailable, SnapshotStore } from "@cairn/content-store"
import { HeliaSnapshotStore } from "@cairn/content-store-helia"
import { Effect, Layer, Schema } from "effect"
import { FetchHttpClient } from "effect/http"
import { CID } from "multiformats/cid"
import { makeKuboBlockstore } from "./KuboBlockstore.ts"
import { type KuboRpc, makeKuboRpc, meansNotFound } from "./KuboRpc.ts"

export interface Options {
  /** The RPC API of the node that keeps private content, such as `http://127.0.0.1:5002`. */
  readonly privateApiUrl: string
}

/** The name of the pins that keep snapshots. */
export const pinName = "cairn-snapshot"

/** `pin/ls --type=recursive --names` as JSON. */
const PinList = Schema.fromJsonString(Schema.Struct({
  Keys: Schema.NullOr(Schema.Record(Schema.String, Schema.Struct({ Type: Schema.String, Name: Schema.optional(Schema.String) })))
}))
/** One line of `repo/gc`'s stream: a removed block's CID, or an error. */
const GcLine = Schema.fromJsonString(Schema.Struct({
  Key: Schema.optional(Schema.NullOr(Schema.Struct({ "/": Schema.String }))),
  Error: Schema.optional(Schema.String)
}))

const unavailable = (operation: string) => (cause: unknown) =>
  cause instanceof ContentStoreUnavailable ? cause : new ContentStoreUnavailable({ operation, cause })

/** CIDs compared as Kubo may print them (a CIDv0 pin is listed as `Qm…`). */
const key = (cid: CID) => cid.toV1().toString()

/** Every recursive pin: its CID (as `key` gives it) and name. */
const recursivePins = (rpc: KuboRpc) =>
  rpc.post("pin/ls", { type: "recursive", names: "true" }).pipe(
    Effect.flatMap((response) => rpc.text("pin/ls", response)),
    Effect.flatMap(Schema.decodeUnknownEffect(PinList)),
    Effect.map(({ Keys }) => new Map(Object.entries(Keys ?? {}).map(([cid, pin]) => [key(CID.parse(cid)), { cid, name: pin.Name ?? "" }]))),
    Effect.mapError(unavailable("pin/ls"))
  )

/** Pins a live root, offline; a root (or a block below it) the node lacks is passed over: nothing of it to keep. */
const pin = (rpc: KuboRpc, root: CID) =>
  rpc.post("pin/add", { arg: root.toString(), recursive: "true", name: pinName, offline: "true" }).pipe(
    Effect.asVoid,
    Effect.catchTag("KuboRefused", (refused) => meansNotFound(refused) ? Effect.void : Effect.fail(unavailable("pin/add")(refused)))
  )

/** Runs `repo/gc`; gives how many blocks it removed (one line each). */
const repoGc = (rpc: KuboRpc) =>
  rpc.post("repo/gc", {}).pipe(
    Effect.flatMap((response) => rpc.text("repo/gc", response)),
    Effect.flatMap((text) =>
      Effect.forEach(text.split("\n").filter((line) => line.trim() !== ""), (line) => Schema.decodeUnknownEffect(GcLine)(line))
    ),
    Effect.flatMap((lines) => {
      const failed = lines.find((line) => line.Error !== undefined && line.Error !== "")
      return failed === undefined
        ? Effect.succeed(lines.filter((line) => line.Key != null).length)
        : Effect.fail(new Error(failed.Error))
    }),
    Effect.mapError(unavailable("repo/gc"))
  )

const collectGarbage = (rpc: KuboRpc) => (live: ReadonlyArray<CID>) =>
  Effect.gen(function*() {
    const pins = yield* recursivePins(rpc)
    const liveKeys = new Set(live.map(key))
    // A live root pinned already (by an earlier collection, or under another name) stays as it is.
    yield* Effect.forEach(live.filter((root) => !pins.has(key(root))), (root) => pin(rpc, root), { concurrency: 4, discard: true })
    const stale = [...pins].filter(([cidKey, { name }]) => name === pinName && !liveKeys.has(cidKey))
    yield* Effect.forEach(stale, ([, { cid }]) =>
      rpc.post("pin/rm", { arg: cid, recursive: "true" }).pipe(Effect.mapError(unavailable("pin/rm"))), { concurrency: 4, discard: true })
    return yield* repoGc(rpc)
  }).pipe(Effect.mapError(unavailable("collectGarbage")))

export const make = (options: Options) =>
  Effect.gen(function*() {
    const rpc = yield* makeKuboRpc(options.privateApiUrl)
    const store = yield* HeliaSnapshotStore.makeWith({ ...makeKuboBlockstore(rpc), collectGarbage: collectGarbage(rpc) })
    // Pinned as soon as it is stored: a `repo/gc` run by anyone (or Kubo's own) before the next collection must not
    // take it. A tree never recorded (a crash before its event) loses its pin at the next collection.
    return SnapshotStore.of({
      ...store,
      importTree: (entries) => store.importTree(entries).pipe(Effect.tap((tree) => pin(rpc, CID.parse(tree.cid))))
    })
  })

export const layer = (options: Options) =>
  Layer.effect(SnapshotStore, make(options)).pipe(Layer.provide(FetchHttpClient.layer))
