/** What the pairings log records: what the gateway did, once it did it (the service asked it first). */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { ChannelPairingApproved, WhatsAppLinked, WhatsAppLinkStarted } from "./Events.ts"

export class RecordPairingApproval extends Schema.TaggedClass<RecordPairingApproval>()(
  "RecordPairingApproval",
  fieldsOf(ChannelPairingApproved.fields)
) {}

export class RecordWhatsAppLinkStarted extends Schema.TaggedClass<RecordWhatsAppLinkStarted>()(
  "RecordWhatsAppLinkStarted",
  fieldsOf(WhatsAppLinkStarted.fields)
) {}

export class RecordWhatsAppLinked extends Schema.TaggedClass<RecordWhatsAppLinked>()(
  "RecordWhatsAppLinked",
  fieldsOf(WhatsAppLinked.fields)
) {}

export type PairingCommand = RecordPairingApproval | RecordWhatsAppLinkStarted | RecordWhatsAppLinked
