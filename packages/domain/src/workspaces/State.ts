/** A workspace as its history leaves it: its creation record and the agents holding its slots, or deleted. */
import type { WorkspaceCreated } from "./Events.ts"

export type WorkspaceState =
  | { readonly _tag: "NoWorkspace" }
  | { readonly _tag: "Workspace"; readonly created: WorkspaceCreated; readonly agents: ReadonlySet<string> }
  | { readonly _tag: "Deleted"; readonly created: WorkspaceCreated }

export const initial: WorkspaceState = { _tag: "NoWorkspace" }
