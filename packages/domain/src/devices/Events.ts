/**
 * What is done to the devices paired with an agent's gateway (stream `devices-<agentId>`): each pairing request
 * approved or rejected, each paired device removed, by whom (the event's actor). For audit. Stored: the schema only
 * ever grows optional fields.
 */
import { Schema } from "effect"

const fields = {
  agentId: Schema.String,
  workspaceId: Schema.String,
  /** The pairing request's id (approved, rejected) or the paired device's (removed), as the gateway names them. */
  deviceId: Schema.String,
  at: Schema.String
}

export class DevicePairingApproved extends Schema.TaggedClass<DevicePairingApproved>()("DevicePairingApproved", fields) {}

export class DevicePairingRejected extends Schema.TaggedClass<DevicePairingRejected>()("DevicePairingRejected", fields) {}

export class DeviceRemoved extends Schema.TaggedClass<DeviceRemoved>()("DeviceRemoved", fields) {}

export const DeviceEvent = Schema.Union([DevicePairingApproved, DevicePairingRejected, DeviceRemoved])
export type DeviceEvent = typeof DeviceEvent.Type
