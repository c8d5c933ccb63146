/**
 * An agent as its history leaves it. Status is `starting` until the gateway answers, then `running`;
 * `not_running` when it failed to start, crashed or stopped; `sleeping` when it was idle and its gateway was stopped
 * until something is addressed to it (a wake makes it `starting` again). A crash puts the agent in recovery: the supervisor
 * starts it again, with growing delays, until it runs (or is deleted). The gateway token is never stored: it is
 * derived from a server secret and the token generation, which a rotation bumps, so every older token stops working.
 */
import type { AgentStatus, AttachedSkill } from "./Events.ts"

export interface Agent {
  readonly agentId: string
  readonly workspaceId: string
  readonly userId: string
  readonly name: string
  /** What it shows of itself (Profile.ts); null: none. */
  readonly description: string | null
  readonly vibe: string | null
  readonly emoji: string | null
  /** The model it answers with (`provider/model`), applied to its runtime config; null: Cairn does not set one. */
  readonly model: string | null
  readonly engineVersion: string
  readonly status: AgentStatus
  readonly tokenGeneration: number
  /** Crashed, and the supervisor is bringing it back. */
  readonly recovering: boolean
  /** The Cairn node whose engine runs the gateway; only that node supervises it. */
  readonly node: string | null
  readonly createdAt: string
  /** Attached secrets: id to name (the variable the gateway gets). */
  readonly secrets: ReadonlyMap<string, string>
  /** Attached library skills by id, each at the version the agent's workspace got. */
  readonly skills: ReadonlyMap<string, AttachedSkill>
}

export type AgentState =
  | { readonly _tag: "NoAgent" }
  | { readonly _tag: "Live"; readonly agent: Agent }
  | { readonly _tag: "Deleted"; readonly agent: Agent }

export const initial: AgentState = { _tag: "NoAgent" }
