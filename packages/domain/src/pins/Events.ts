/**
 * What happens to a pin-by-CID job (stream `pin-job-<id>`): queued, retrieving its blocks, pinned (recorded as a file
 * of the workspace's), failed with a reason, or cancelled. Stored: the schema only ever grows optional fields.
 */
import { Schema } from "effect"
import { KeyValues } from "../files/Events.ts"
import { Network } from "../Network.ts"

export class PinJobQueued extends Schema.TaggedClass<PinJobQueued>()("PinJobQueued", {
  jobId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  network: Network,
  cid: Schema.String,
  name: Schema.String,
  groupId: Schema.NullOr(Schema.String),
  keyvalues: KeyValues,
  hostNodes: Schema.Array(Schema.String),
  /** The IPFS Pinning Service API's `meta` (a PSA pin), kept apart from the file's keyvalues. */
  meta: Schema.optionalKey(KeyValues),
  /** Made through the Pinning Service API (`/pins`) rather than `/v3`. */
  psa: Schema.optionalKey(Schema.Boolean),
  /** The node that queued it, whose worker takes it (absent before jobs were recorded with their node). */
  node: Schema.optionalKey(Schema.String),
  at: Schema.String
}) {}

export class PinJobRetrieving extends Schema.TaggedClass<PinJobRetrieving>()("PinJobRetrieving", {
  jobId: Schema.String,
  /** The node working on it: the one that queued it, or one that took it over when that node's lease expired. */
  node: Schema.optionalKey(Schema.String),
  at: Schema.String
}) {}

export class PinJobPinned extends Schema.TaggedClass<PinJobPinned>()("PinJobPinned", {
  jobId: Schema.String,
  fileId: Schema.String,
  size: Schema.Number,
  at: Schema.String
}) {}

export class PinJobFailed extends Schema.TaggedClass<PinJobFailed>()("PinJobFailed", {
  jobId: Schema.String,
  reason: Schema.String,
  at: Schema.String
}) {}

export class PinJobCancelled extends Schema.TaggedClass<PinJobCancelled>()("PinJobCancelled", {
  jobId: Schema.String,
  at: Schema.String
}) {}

export const PinJobEvent = Schema.Union([PinJobQueued, PinJobRetrieving, PinJobPinned, PinJobFailed, PinJobCancelled])
export type PinJobEvent = typeof PinJobEvent.Type
