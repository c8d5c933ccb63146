/** What can be asked of a pin job: queue it, then (its worker) mark it retrieving, pinned or failed; or cancel it. */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { PinJobCancelled, PinJobFailed, PinJobPinned, PinJobQueued, PinJobRetrieving } from "./Events.ts"

export class QueuePin extends Schema.TaggedClass<QueuePin>()("QueuePin", fieldsOf(PinJobQueued.fields)) {}
export class StartRetrieving extends Schema.TaggedClass<StartRetrieving>()("StartRetrieving", {
  ...fieldsOf(PinJobRetrieving.fields),
  /** Takes over a job this other node had, whose lease expired (cluster failover); otherwise only an own job. */
  takeFrom: Schema.optionalKey(Schema.String)
}) {}
export class MarkPinned extends Schema.TaggedClass<MarkPinned>()("MarkPinned", fieldsOf(PinJobPinned.fields)) {}
export class MarkFailed extends Schema.TaggedClass<MarkFailed>()("MarkFailed", fieldsOf(PinJobFailed.fields)) {}
export class CancelPin extends Schema.TaggedClass<CancelPin>()("CancelPin", {
  ...fieldsOf(PinJobCancelled.fields),
  workspaceId: Schema.String,
  /** Also a pinned or failed job (the Pinning Service API's remove); otherwise only an open one. */
  evenIfFinished: Schema.optionalKey(Schema.Boolean)
}) {}

export const PinJobCommand = Schema.Union([QueuePin, StartRetrieving, MarkPinned, MarkFailed, CancelPin])
export type PinJobCommand = typeof PinJobCommand.Type
