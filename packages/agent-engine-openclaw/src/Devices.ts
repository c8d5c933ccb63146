/** Reads `openclaw devices list --json` (reference §2.4) into the port's Device shape. */
import type { Device, Devices } from "@cairn/agent-engine"
import { Effect, Schema } from "effect"

/** The parts of a listed device the port exposes; unknown fields are ignored. */
const RawDevice = Schema.Struct({
  deviceId: Schema.optionalKey(Schema.String),
  requestId: Schema.optionalKey(Schema.String),
  id: Schema.optionalKey(Schema.String),
  displayName: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  clientId: Schema.optionalKey(Schema.String),
  ts: Schema.optionalKey(Schema.Number),
  createdAtMs: Schema.optionalKey(Schema.Number)
})
const DeviceList = Schema.Struct({ pending: Schema.Array(RawDevice), paired: Schema.Array(RawDevice) })
const decodeDeviceList = Schema.decodeUnknownEffect(Schema.fromJsonString(DeviceList))

/**
 * A pending request is answered by its request id (`device.pair.approve {requestId}`), a paired device removed by
 * its device id: each list gives the id its next step takes.
 */
const toDevice = (raw: typeof RawDevice.Type, list: "pending" | "paired"): Device => {
  const id = (list === "pending" ? raw.requestId ?? raw.deviceId : raw.deviceId ?? raw.requestId) ?? raw.id ?? "unknown"
  const at = raw.ts ?? raw.createdAtMs
  return {
    id,
    name: raw.displayName ?? raw.name ?? raw.clientId ?? id,
    ...(at === undefined ? {} : { requestedAt: new Date(at).toISOString() })
  }
}

/** Parses the CLI's output, which may print notices before its JSON document; fails with a description. */
export const parseDeviceList = (stdout: string): Effect.Effect<Devices, string> => {
  const json = stdout.slice(Math.max(0, stdout.search(/^\{/m)))
  return decodeDeviceList(json).pipe(
    Effect.map((list) => ({
      pending: list.pending.map((raw) => toDevice(raw, "pending")),
      paired: list.paired.map((raw) => toDevice(raw, "paired"))
    })),
    Effect.mapError((issue) => `unexpected output (${issue}): ${stdout.slice(0, 1_000)}`)
  )
}
