/** Decides a pairings record: each approval is recorded as it happened. Pure and total. */
import { Result } from "effect"
import type { PairingCommand } from "./Commands.ts"
import { ChannelPairingApproved, type PairingEvent } from "./Events.ts"
import type { PairingState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<PairingEvent>, never>

export const decide = ({ _tag, ...fields }: PairingCommand, _state: PairingState): Decision =>
  Result.succeed([new ChannelPairingApproved(fields)])
