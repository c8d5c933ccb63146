/** Folds one group event into the group's state; changes to a group that is not active change nothing. */
import { Match } from "effect"
import { GroupCreated, type GroupEvent } from "./Events.ts"
import type { GroupState } from "./State.ts"

export const evolve = (state: GroupState, event: GroupEvent): GroupState =>
  Match.valueTags(event, {
    GroupCreated: (group): GroupState => ({ _tag: "Active", group }),
    GroupUpdated: (change): GroupState =>
      state._tag === "Active"
        ? {
          _tag: "Active",
          group: new GroupCreated({
            ...state.group,
            name: change.name ?? state.group.name,
            isPublic: change.isPublic ?? state.group.isPublic
          })
        }
        : state,
    GroupDeleted: (): GroupState => (state._tag === "Active" ? { _tag: "Deleted", group: state.group } : state)
  })
