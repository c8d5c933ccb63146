/** What the pairings log records: an approval the gateway made, once it made it (the service asked it first). */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { ChannelPairingApproved } from "./Events.ts"

export class RecordPairingApproval extends Schema.TaggedClass<RecordPairingApproval>()(
  "RecordPairingApproval",
  fieldsOf(ChannelPairingApproved.fields)
) {}

export type PairingCommand = RecordPairingApproval
