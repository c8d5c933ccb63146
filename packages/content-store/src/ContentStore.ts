/**
 * The content store port: IPFS content addressed by CID, kept apart per network. Public content may be served
 * by the gateway; private content is only ever read on behalf of its owner (the application checks ownership
 * before it calls `cat`). Adapters: HeliaContentStore (embedded @helia/unixfs on a filesystem blockstore, or in
 * memory with `layerMemory` for tests), KuboContentStore (a Kubo node's RPC API).
 */
import { Context, type Effect, Schema, type Stream } from "effect"

export type Network = "public" | "private"

export interface AddOptions {
  readonly network: Network
  /** 1 by default (base32 `bafy…`/`bafk…`); 0 gives `Qm…` (dag-pb, sha2-256). */
  readonly cidVersion?: 0 | 1
}

export interface Added {
  readonly cid: string
  /** Bytes of content added (the file's size, not the DAG's). */
  readonly size: number
}

/** The CID is not in this network's store. */
export class ContentNotFound extends Schema.TaggedError<ContentNotFound>()("ContentNotFound", {
  cid: Schema.String,
  network: Schema.Literals(["public", "private"])
}) {
  override get message() {
    return `Content ${this.cid} not found on the ${this.network} network`
  }
}

/** The store failed or could not be reached (a Kubo node down, a disk error). */
export class ContentStoreUnavailable extends Schema.TaggedError<ContentStoreUnavailable>()("ContentStoreUnavailable", {
  operation: Schema.String,
  cause: Schema.Defect()
}) {
  /** Clients get 503 Service unavailable; the cause goes to the log (see @cairn/domain DocumentedError). */
  readonly unavailable = true
  override get message() {
    return `Content store ${this.operation} failed`
  }
}

export type ContentStoreError = ContentNotFound | ContentStoreUnavailable

export class ContentStore extends Context.Service<ContentStore, {
  /** Imports bytes as a UnixFS file (Kubo-compatible chunking: the CID matches `ipfs add` with the same version). */
  readonly add: (
    content: Stream.Stream<Uint8Array, unknown>,
    options: AddOptions
  ) => Effect.Effect<Added, ContentStoreUnavailable>
  /** The file's bytes. */
  readonly cat: (cid: string, network: Network) => Stream.Stream<Uint8Array, ContentStoreError>
  readonly has: (cid: string, network: Network) => Effect.Effect<boolean, ContentStoreUnavailable>
  /** The root block's bytes, for `application/vnd.ipld.raw` (trustless gateway). */
  readonly block: (cid: string, network: Network) => Effect.Effect<Uint8Array, ContentStoreError>
  /** The whole DAG under the CID as a CARv1 with that root, for `application/vnd.ipld.car`. */
  readonly car: (cid: string, network: Network) => Stream.Stream<Uint8Array, ContentStoreError>
}>()("cairn/ContentStore") {}
