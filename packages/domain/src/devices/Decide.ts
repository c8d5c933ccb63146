/** Decides a devices record: each is recorded as it happened. Pure and total. */
import { Result } from "effect"
import type { DeviceCommand } from "./Commands.ts"
import { DevicePairingApproved, DevicePairingRejected, type DeviceEvent, DeviceRemoved } from "./Events.ts"
import type { DeviceState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<DeviceEvent>, never>

const eventOf = { approved: DevicePairingApproved, rejected: DevicePairingRejected, removed: DeviceRemoved } as const

export const decide = ({ _tag, action, ...fields }: DeviceCommand, _state: DeviceState): Decision =>
  Result.succeed([new eventOf[action](fields)])
