/**
 * Wallet signatures of CIDs. Adding one checks, in order: the caller's workspace holds the CID on that network
 * and uploaded it first (403), it has no signature yet (409), and the EIP-712 signature verifies for the address
 * over the first upload's date (400). Reading one is a lookup across the network; a private CID's signature is
 * only visible to its workspace.
 */
import { CidRecord, type Network } from "@cairn/domain"
import { EventStore, ExpectedVersion } from "@cairn/event-store"
import { SignatureVerifier } from "@cairn/signatures"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "./Access.ts"
import { encoder, load, now } from "./EventCodec.ts"

export interface SignatureView {
  readonly cid: string
  readonly signature: string
  readonly address: string
}

const encode = encoder(CidRecord.CidEvent)

export class Signatures extends Context.Service<Signatures>()("cairn/Signatures", {
  make: Effect.gen(function*() {
    const store = yield* EventStore
    const sql = yield* SqlClient.SqlClient
    const verifier = yield* SignatureVerifier

    const add = Effect.fn("Signatures.add")(function*(
      principal: Principal,
      network: Network,
      cid: string,
      input: { readonly signature: string; readonly address: string }
    ) {
      const stream = CidRecord.stream(network, cid)
      const { state, version } = yield* load(store, stream, CidRecord.CidEvent, CidRecord.initial, CidRecord.evolve)
      const date = yield* Effect.fromResult(CidRecord.signableBy(state, cid, principal.workspaceId))
      const verified = yield* verifier.verify({ address: input.address, cid, date, signature: input.signature })
      const at = yield* now
      const events = yield* Effect.fromResult(CidRecord.addSignature(state, { cid, network, workspaceId: principal.workspaceId, address: input.address, signature: input.signature, verified, at }))
      // A concurrent signer that won the race shows up as a version conflict: it is "already signed".
      yield* store.append([{ stream, expected: ExpectedVersion.Exact(version), events: events.map((e) => encode(e, { actor: principal.userId })) }]).pipe(
        Effect.catchTag("WrongExpectedVersion", () => Effect.fail(new CidRecord.CidAlreadySigned({ cid })))
      )
      return { cid, signature: input.signature, address: input.address } satisfies SignatureView
    })

    const find = (network: Network, cid: string, workspaceId: string | undefined) =>
      sql<{ signature: string; address: string; workspace_id: string }>`
        SELECT signature, address, workspace_id FROM cairn_signatures WHERE network = ${network} AND cid = ${cid}`.pipe(
        Effect.orDie,
        Effect.map(([row]) =>
          Option.fromNullishOr(row).pipe(
            Option.filter((row) => network === "public" || row.workspace_id === workspaceId),
            Option.map((row): SignatureView => ({ cid, signature: row.signature, address: row.address }))
          )
        )
      )

    const get = (principal: Principal, network: Network, cid: string) =>
      find(network, cid, principal.workspaceId).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new CidRecord.SignatureNotFound({ cid })),
          onSome: Effect.succeed
        }))
      )

    const remove = Effect.fn("Signatures.remove")(function*(principal: Principal, network: Network, cid: string) {
      const stream = CidRecord.stream(network, cid)
      const { state, version } = yield* load(store, stream, CidRecord.CidEvent, CidRecord.initial, CidRecord.evolve)
      const at = yield* now
      const events = yield* Effect.fromResult(CidRecord.removeSignature(state, { cid, network, workspaceId: principal.workspaceId, at }))
      yield* store.append([{ stream, expected: ExpectedVersion.Exact(version), events: events.map((e) => encode(e, { actor: principal.userId })) }]).pipe(
        Effect.catchTag("WrongExpectedVersion", () => Effect.fail(new CidRecord.SignatureNotFound({ cid })))
      )
    })

    /** The public signature of a CID, for the gateway's response header. */
    const publicSignature = (cid: string) => find("public", cid, undefined)

    return { add, get, remove, publicSignature }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
