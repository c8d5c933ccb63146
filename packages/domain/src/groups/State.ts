/**
 * A group as its history leaves it: not created, active (its creation record with the latest name and flag), or
 * deleted (the record kept).
 */
import type { GroupCreated } from "./Events.ts"

export type GroupState =
  | { readonly _tag: "NoGroup" }
  | { readonly _tag: "Active"; readonly group: GroupCreated }
  | { readonly _tag: "Deleted"; readonly group: GroupCreated }

export const initial: GroupState = { _tag: "NoGroup" }
