/** What the devices log records: what the gateway did, once it did it (the service asked it first). */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { DevicePairingApproved } from "./Events.ts"

const fields = fieldsOf(DevicePairingApproved.fields)

export class RecordDeviceAction extends Schema.TaggedClass<RecordDeviceAction>()("RecordDeviceAction", {
  ...fields,
  action: Schema.Literals(["approved", "rejected", "removed"])
}) {}

export type DeviceCommand = RecordDeviceAction
