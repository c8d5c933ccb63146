/**
 * Wallet signatures of CIDs. Adding one checks, in order: the caller's workspace holds the CID on that network
 * and uploaded it first (403), it has no signature yet (409), and the EIP-712 signature verifies for the address
 * over the first upload's date (400). The verifier runs before the command is decided, since deciding is pure;
 * a concurrent signer that wins the race makes the command handler decide again, which refuses with 409. Reading
 * one is a lookup across the network; a private CID's signature is only visible to its workspace.
 */
import { CidRecord, type Network } from "@cairn/domain"
import { SignatureVerifier } from "@cairn/signatures"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import * as SignaturesTable from "../readmodels/SignaturesTable.ts"

export interface SignatureView {
  readonly cid: string
  readonly signature: string
  readonly address: string
}

export class Signatures extends Context.Service<Signatures>()("cairn/Signatures", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const signatures = SignaturesTable.queries(yield* SqlClient.SqlClient)
    const verifier = yield* SignatureVerifier

    const add = Effect.fn("Signatures.add")(function*(
      principal: Principal,
      network: Network,
      cid: string,
      input: { readonly signature: string; readonly address: string }
    ) {
      const { workspaceId, userId } = principal
      const stream = CidRecord.stream(network, cid)
      const loaded = yield* commands.load(CidRecord.decider, stream)
      const { state } = loaded
      // Refused before the verifier is asked; the date it needs is the first upload's, which never changes.
      const date = yield* Effect.fromResult(CidRecord.signableBy(state, cid, workspaceId))
      const verified = yield* verifier.verify({ address: input.address, cid, date, signature: input.signature })
      const command = new CidRecord.AddSignature({
        cid,
        network,
        workspaceId,
        address: input.address,
        signature: input.signature,
        verified,
        at: yield* now
      })
      // Decided on what was just read; a signer that got in between makes it read and decide again.
      yield* commands.execute(CidRecord.decider, stream, command, { actor: userId }, loaded)
      return { cid, signature: input.signature, address: input.address } satisfies SignatureView
    })

    /** What a reader in `workspaceId` sees of a stored signature: a private CID's is only its own workspace's. */
    const visible = (network: Network, cid: string, workspaceId: string | undefined) =>
      (stored: Option.Option<SignaturesTable.StoredSignature>): Option.Option<SignatureView> =>
        Option.isSome(stored) && (network === "public" || stored.value.workspaceId === workspaceId)
          ? Option.some({ cid, signature: stored.value.signature, address: stored.value.address })
          : Option.none()

    const find = (network: Network, cid: string, workspaceId: string | undefined) =>
      Effect.map(signatures.byCid(network, cid), visible(network, cid, workspaceId))

    const found = (cid: string) => (view: Option.Option<SignatureView>): Effect.Effect<SignatureView, CidRecord.SignatureNotFound> =>
      Option.isSome(view) ? Effect.succeed(view.value) : Effect.fail(new CidRecord.SignatureNotFound({ cid }))

    const get = (principal: Principal, network: Network, cid: string) =>
      Effect.flatMap(find(network, cid, principal.workspaceId), found(cid))

    /**
     * `get`, with the standing of the caller's API key read in the same database round trip, for a route that
     * authenticates and reads a signature in one go (the signature GET: docs/performance.md, bench:http). The
     * caller admits the key (`ApiKeys.admit`) before it asks `get` for the signature.
     */
    const getWithKey = (keyId: string, network: Network, cid: string) =>
      Effect.map(signatures.byCidWithKey(keyId, network, cid), (row) => ({
        standing: row.standing,
        get: (principal: Principal) => found(cid)(visible(network, cid, principal.workspaceId)(row.signature))
      }))

    const remove = Effect.fn("Signatures.remove")(function*(principal: Principal, network: Network, cid: string) {
      const command = new CidRecord.RemoveSignature({ cid, network, workspaceId: principal.workspaceId, at: yield* now })
      yield* commands.execute(CidRecord.decider, CidRecord.stream(network, cid), command, { actor: principal.userId })
    })

    /** The public signature of a CID, for the gateway's response header. */
    const publicSignature = (cid: string) => find("public", cid, undefined)

    return { add, get, getWithKey, remove, publicSignature }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
