/**
 * Groups: create (its name claimed among the workspace's groups on the network, in the same append), list with
 * filters and keyset pagination, get, update (a rename moves the claim), delete (the name released; its files stay,
 * in no group), and putting files in a group or taking them out (decided on the file, with the group required in the
 * same append, so a file never joins a group that is being deleted). Every group is scoped to the caller's
 * workspace and network; reads come from the groups table.
 */
import { File, Group, type Network, Reservation, ValidationFailed } from "@cairn/domain"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import { CommandHandler, decision, emptyStream } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import * as GroupsTable from "../readmodels/GroupsTable.ts"
import * as PageTokens from "./PageTokens.ts"

export type { GroupView } from "../readmodels/GroupsTable.ts"

export interface GroupListQuery {
  readonly name?: string
  readonly isPublic?: boolean
  readonly limit: number
  readonly pageToken?: string
}

/** A group as its creation record has it now: what a response right after a command shows. */
const toView = (group: Group.GroupCreated): GroupsTable.GroupView => ({
  id: group.groupId,
  name: group.name,
  isPublic: group.isPublic,
  createdAt: group.at,
  network: group.network
})

/** The group a decision left active (create and update only succeed on an active group). */
const activeGroup = (state: Group.GroupState) => (state as Extract<Group.GroupState, { _tag: "Active" }>).group

const duplicateName = (name: string) => () => Effect.fail(new Group.DuplicateGroupName({ name }))

export class Groups extends Context.Service<Groups>()("cairn/Groups", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const groups = GroupsTable.queries(yield* SqlClient.SqlClient)

    const create = Effect.fn("Groups.create")(function*(principal: Principal, network: Network, input: { readonly name: string; readonly isPublic: boolean }) {
      const name = yield* Effect.fromResult(Group.validateName(input.name))
      const { workspaceId, userId } = principal
      const groupId = crypto.randomUUID()
      const at = yield* now
      const [, { state }] = yield* commands.executeAll([
        decision(Reservation.decider, Group.nameReservation(workspaceId, network, name), new Reservation.ClaimReservation({ owner: groupId, at })),
        decision(Group.decider, Group.stream(groupId), new Group.CreateGroup({ groupId, workspaceId, network, name, isPublic: input.isPublic, at }), emptyStream(Group.decider))
      ], { actor: userId }).pipe(Effect.catchTag("ReservationTaken", duplicateName(name)))
      return toView(activeGroup(state))
    })

    const list = Effect.fn("Groups.list")(function*(principal: Principal, network: Network, query: GroupListQuery) {
      const after = query.pageToken === undefined || query.pageToken === "" ? Option.none<PageTokens.Cursor>() : PageTokens.decode(query.pageToken)
      if (query.pageToken && Option.isNone(after)) return yield* new ValidationFailed({ detail: "pageToken is not a token this service issued" })
      // One group more than the page holds tells whether there is a next page.
      const found = yield* groups.page({
        workspaceId: principal.workspaceId,
        network,
        ...(query.name === undefined ? {} : { name: query.name }),
        ...(query.isPublic === undefined ? {} : { isPublic: query.isPublic }),
        after,
        limit: query.limit + 1
      })
      const page = found.slice(0, query.limit)
      return { groups: page, nextPageToken: found.length > query.limit ? PageTokens.encode(page[page.length - 1]!) : "" }
    })

    const get = (principal: Principal, network: Network, groupId: string) =>
      groups.byId(groupId, { workspaceId: principal.workspaceId, network }).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new Group.GroupNotFound({ groupId })),
          onSome: Effect.succeed
        }))
      )

    /** The group's stream as this workspace sees it on this network: its state and version, and the group. */
    const loadVisible = (principal: Principal, network: Network, groupId: string) =>
      Effect.gen(function*() {
        const loaded = yield* commands.load(Group.decider, Group.stream(groupId))
        const group = yield* Effect.fromResult(Group.visible(loaded.state, groupId, principal.workspaceId, network))
        return { loaded, group }
      })

    const update = Effect.fn("Groups.update")(function*(
      principal: Principal,
      network: Network,
      groupId: string,
      change: { readonly name?: string; readonly isPublic?: boolean }
    ) {
      const name = change.name === undefined ? undefined : yield* Effect.fromResult(Group.validateName(change.name))
      const { workspaceId, userId } = principal
      const at = yield* now
      // Planned on each attempt: a rename releases the name the group has when it is decided, and claims the new one.
      const [outcome] = yield* commands.executePlan(Effect.gen(function*() {
        const { loaded, group } = yield* loadVisible(principal, network, groupId)
        const command = new Group.UpdateGroup({
          groupId,
          workspaceId,
          network,
          ...(name === undefined ? {} : { name }),
          ...(change.isPublic === undefined ? {} : { isPublic: change.isPublic }),
          at
        })
        const renamed = name !== undefined && name !== group.name
        return [
          decision(Group.decider, Group.stream(groupId), command, loaded),
          ...(renamed
            ? [
              decision(Reservation.decider, Group.nameReservation(workspaceId, network, group.name), new Reservation.ReleaseReservation({ owner: groupId, at })),
              decision(Reservation.decider, Group.nameReservation(workspaceId, network, name), new Reservation.ClaimReservation({ owner: groupId, at }))
            ]
            : [])
        ] as const
      }), { actor: userId }).pipe(Effect.catchTag("ReservationTaken", duplicateName(name ?? "")))
      return toView(activeGroup(outcome.state))
    })

    const remove = Effect.fn("Groups.remove")(function*(principal: Principal, network: Network, groupId: string) {
      const { workspaceId, userId } = principal
      const at = yield* now
      yield* commands.executePlan(Effect.gen(function*() {
        const { loaded, group } = yield* loadVisible(principal, network, groupId)
        return [
          decision(Group.decider, Group.stream(groupId), new Group.DeleteGroup({ groupId, workspaceId, network, at }), loaded),
          decision(Reservation.decider, Group.nameReservation(workspaceId, network, group.name), new Reservation.ReleaseReservation({ owner: groupId, at }))
        ] as const
      }), { actor: userId })
    })

    /** Puts the caller's file in the caller's group on the network (moving it out of another); already there is a success. */
    const addFile = Effect.fn("Groups.addFile")(function*(principal: Principal, network: Network, groupId: string, fileId: string) {
      const { workspaceId, userId } = principal
      const at = yield* now
      yield* commands.executeAll([
        decision(Group.decider, Group.stream(groupId), new Group.RequireGroup({ groupId, workspaceId, network })),
        decision(File.decider, File.stream(fileId), new File.AddFileToGroup({ fileId, workspaceId, network, groupId, at }))
      ], { actor: userId })
    })

    /** Takes the caller's file out of the group; a file that is not in it is left as it is, and that is a success too. */
    const removeFile = Effect.fn("Groups.removeFile")(function*(principal: Principal, network: Network, groupId: string, fileId: string) {
      const { workspaceId, userId } = principal
      const at = yield* now
      yield* commands.executeAll([
        decision(Group.decider, Group.stream(groupId), new Group.RequireGroup({ groupId, workspaceId, network })),
        decision(File.decider, File.stream(fileId), new File.RemoveFileFromGroup({ fileId, workspaceId, network, groupId, at }))
      ], { actor: userId })
    })

    return { create, list, get, update, remove, addFile, removeFile }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
