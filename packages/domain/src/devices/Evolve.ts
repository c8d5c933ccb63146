/** The devices log holds no state: every event leaves it as it was. */
import type { DeviceEvent } from "./Events.ts"
import type { DeviceState } from "./State.ts"

export const evolve = (state: DeviceState, _event: DeviceEvent): DeviceState => state
