/**
 * What happens to one CID on one network (stream `cid-<network>-<cid>`): a workspace uploaded a file of it or
 * released one (deleted the file), and a workspace signed it or removed its signature. These are stored: their
 * schemas only ever grow optional fields.
 */
import { Schema } from "effect"
import { Network } from "../Network.ts"

export class CidUploaded extends Schema.TaggedClass<CidUploaded>()("CidUploaded", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  fileId: Schema.String,
  at: Schema.String
}) {}

export class CidReleased extends Schema.TaggedClass<CidReleased>()("CidReleased", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  fileId: Schema.String,
  at: Schema.String
}) {}

export class SignatureAdded extends Schema.TaggedClass<SignatureAdded>()("SignatureAdded", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  address: Schema.String,
  signature: Schema.String,
  at: Schema.String
}) {}

export class SignatureRemoved extends Schema.TaggedClass<SignatureRemoved>()("SignatureRemoved", {
  cid: Schema.String,
  network: Network,
  workspaceId: Schema.String,
  at: Schema.String
}) {}

export const CidEvent = Schema.Union([CidUploaded, CidReleased, SignatureAdded, SignatureRemoved])
export type CidEvent = typeof CidEvent.Type
