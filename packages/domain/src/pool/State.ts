/** The pool's reserved ids not yet taken nor discarded, with their engine versions: what a restart must clear away. */
import type { PoolEvent } from "./Events.ts"

export interface PoolState {
  readonly reserved: ReadonlyMap<string, string>
}

export const initial: PoolState = { reserved: new Map() }

export const evolve = (state: PoolState, event: PoolEvent): PoolState => {
  const reserved = new Map(state.reserved)
  if (event._tag === "PoolGatewayReserved") reserved.set(event.agentId, event.version)
  else reserved.delete(event.agentId)
  return { reserved }
}
