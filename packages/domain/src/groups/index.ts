/**
 * Groups: a workspace's named sets of files on one network (Pinata's groups). Stream `group-<id>`. A file belongs to
 * at most one group, recorded on the file (`group_id`); a group's name is unique among its workspace's groups on its
 * network (a reservation). A group of another workspace, or looked up on the other network, is simply not found.
 */
import type { Decider } from "../Decider.ts"
import type { Network } from "../Network.ts"
import type { GroupCommand } from "./Commands.ts"
import { decide } from "./Decide.ts"
import type { GroupError } from "./Errors.ts"
import { GroupEvent } from "./Events.ts"
import { evolve } from "./Evolve.ts"
import { type GroupState, initial } from "./State.ts"

export * from "./Commands.ts"
export { decide, type Decision, visible } from "./Decide.ts"
export * from "./Errors.ts"
export * from "./Events.ts"
export { evolve } from "./Evolve.ts"
export * from "./Name.ts"
export * from "./State.ts"

export const stream = (groupId: string) => `group-${groupId}`

/** The reservation stream that keeps a name unique among a workspace's groups on one network. */
export const nameReservation = (workspaceId: string, network: Network, name: string) => `reservation-group-name-${workspaceId}-${network}-${name}`

export const decider: Decider<GroupCommand, GroupEvent, GroupState, GroupError> = { initial, decide, evolve, events: GroupEvent }
