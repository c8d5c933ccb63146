/** The uploads log holds no state: every event leaves it as it was. */
import type { UploadEvent } from "./Events.ts"
import type { UploadState } from "./State.ts"

export const evolve = (state: UploadState, _event: UploadEvent): UploadState => state
