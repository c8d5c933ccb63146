/** A secret as its history leaves it: its current sealed value and version, and the agents it is attached to. */
import type { Sealed } from "./Events.ts"

export interface Secret {
  readonly secretId: string
  readonly workspaceId: string
  readonly userId: string
  readonly name: string
  /** The value's version: 1 when created, one more per change. It is part of the ciphertext's associated data. */
  readonly version: number
  readonly sealed: Sealed
  readonly createdAt: string
  readonly updatedAt: string
  /** Attached agents by id, with their names. */
  readonly agents: ReadonlyMap<string, string>
}

export type SecretState =
  | { readonly _tag: "NoSecret" }
  | { readonly _tag: "Active"; readonly secret: Secret }
  | { readonly _tag: "Deleted"; readonly secret: Secret }

export const initial: SecretState = { _tag: "NoSecret" }
