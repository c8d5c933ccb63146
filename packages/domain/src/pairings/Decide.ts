/**
 * Decides a pairings record: each approval and each link begun is recorded as it happened; a link made only once
 * for each begun (it is seen made by whichever look comes first). Pure and total.
 */
import { Result } from "effect"
import type { PairingCommand } from "./Commands.ts"
import { ChannelPairingApproved, type PairingEvent, WhatsAppLinked, WhatsAppLinkStarted } from "./Events.ts"
import type { PairingState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<PairingEvent>, never>

export const decide = (command: PairingCommand, state: PairingState): Decision => {
  switch (command._tag) {
    case "RecordPairingApproval": {
      const { _tag, ...fields } = command
      return Result.succeed([new ChannelPairingApproved(fields)])
    }
    case "RecordWhatsAppLinkStarted": {
      const { _tag, ...fields } = command
      return Result.succeed([new WhatsAppLinkStarted(fields)])
    }
    case "RecordWhatsAppLinked": {
      const { _tag, ...fields } = command
      return Result.succeed(state.whatsAppLinkPending ? [new WhatsAppLinked(fields)] : [])
    }
  }
}
