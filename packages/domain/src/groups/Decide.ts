/** Decides a group command: a group is created once, and only its workspace, on its network, may change it. Pure and total. */
import { Match, Result } from "effect"
import type { Network } from "../Network.ts"
import type { GroupCommand } from "./Commands.ts"
import { GroupAlreadyExists, type GroupError, GroupNotFound } from "./Errors.ts"
import { GroupCreated, GroupDeleted, type GroupEvent, GroupUpdated } from "./Events.ts"
import type { GroupState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<GroupEvent>, GroupError>

/** The group as this workspace sees it on this network; another workspace's, the other network's or a deleted one is not found. */
export const visible = (state: GroupState, groupId: string, workspaceId: string, network: Network): Result.Result<GroupCreated, GroupNotFound> =>
  state._tag === "Active" && state.group.workspaceId === workspaceId && state.group.network === network
    ? Result.succeed(state.group)
    : Result.fail(new GroupNotFound({ groupId }))

export const decide = (command: GroupCommand, state: GroupState): Decision =>
  Match.valueTags(command, {
    CreateGroup: ({ _tag, ...fields }): Decision =>
      state._tag === "NoGroup"
        ? Result.succeed([new GroupCreated(fields)])
        : Result.fail(new GroupAlreadyExists({ groupId: fields.groupId })),
    UpdateGroup: ({ _tag, workspaceId, network, ...change }) =>
      Result.map(visible(state, change.groupId, workspaceId, network), (group): ReadonlyArray<GroupEvent> =>
        (change.name === undefined || change.name === group.name) && (change.isPublic === undefined || change.isPublic === group.isPublic)
          ? []
          : [new GroupUpdated(change)]),
    DeleteGroup: ({ groupId, workspaceId, network, at }) =>
      Result.map(visible(state, groupId, workspaceId, network), (): ReadonlyArray<GroupEvent> => [new GroupDeleted({ groupId, workspaceId, network, at })]),
    RequireGroup: ({ groupId, workspaceId, network }) =>
      Result.map(visible(state, groupId, workspaceId, network), (): ReadonlyArray<GroupEvent> => [])
  })
