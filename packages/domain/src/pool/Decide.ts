/** Decides a pool record. Pure and total: the pool hands each id out once, so nothing here can refuse. */
import { Result } from "effect"
import { fieldsOf } from "../Decider.ts"
import type { PoolCommand } from "./Commands.ts"
import { PoolGatewayDiscarded, type PoolEvent, PoolGatewayReserved, PoolGatewayTaken } from "./Events.ts"
import type { PoolState } from "./State.ts"

const recorded = (command: PoolCommand): PoolEvent => {
  switch (command._tag) {
    case "ReservePoolGateway":
      return new PoolGatewayReserved(fieldsOf(command))
    case "TakePoolGateway":
      return new PoolGatewayTaken(fieldsOf(command))
    case "DiscardPoolGateway":
      return new PoolGatewayDiscarded(fieldsOf(command))
  }
}

export const decide = (command: PoolCommand, _state: PoolState): Result.Result<ReadonlyArray<PoolEvent>, never> =>
  Result.succeed([recorded(command)])
