/**
 * What can be asked of a CID's record. The file service records an upload and a release beside the file's own
 * event; the signature service adds and removes the workspace's wallet signature of the CID.
 */
import { Schema } from "effect"
import { Network } from "../Network.ts"

/** A workspace uploaded a file of this CID (the first upload dates any signature of it). */
export class RecordCidUpload extends Schema.TaggedClass<RecordCidUpload>()("RecordCidUpload", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  fileId: Schema.String,
  at: Schema.String
}) {}

/** A workspace deleted a file of this CID (nothing to record if that file was not live). */
export class ReleaseCid extends Schema.TaggedClass<ReleaseCid>()("ReleaseCid", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  fileId: Schema.String,
  at: Schema.String
}) {}

export class AddSignature extends Schema.TaggedClass<AddSignature>()("AddSignature", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  address: Schema.String,
  signature: Schema.String,
  /**
   * Whether the verifier accepted the signature over the date `signableBy` returned. Verifying is I/O, so the
   * service does it before deciding; the date it covers never changes once the CID is first uploaded.
   */
  verified: Schema.Boolean,
  at: Schema.String
}) {}

/** Only the workspace that signed may remove the signature. */
export class RemoveSignature extends Schema.TaggedClass<RemoveSignature>()("RemoveSignature", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  at: Schema.String
}) {}

export const CidCommand = Schema.Union([RecordCidUpload, ReleaseCid, AddSignature, RemoveSignature])
export type CidCommand = typeof CidCommand.Type
