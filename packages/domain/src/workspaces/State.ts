/** A workspace as its history leaves it: its creation record and the agents holding its slots. */
import type { WorkspaceCreated } from "./Events.ts"

export type WorkspaceState =
  | { readonly _tag: "NoWorkspace" }
  | { readonly _tag: "Workspace"; readonly created: WorkspaceCreated; readonly agents: ReadonlySet<string> }

export const initial: WorkspaceState = { _tag: "NoWorkspace" }
