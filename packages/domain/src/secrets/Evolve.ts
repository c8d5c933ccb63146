/** Folds one secret event into the secret's state; events after deletion change nothing. */
import { Match } from "effect"
import type { SecretEvent } from "./Events.ts"
import type { Secret, SecretState } from "./State.ts"

const active = (state: SecretState, change: (secret: Secret) => Secret): SecretState =>
  state._tag === "Active" ? { _tag: "Active", secret: change(state.secret) } : state

export const evolve = (state: SecretState, event: SecretEvent): SecretState =>
  Match.valueTags(event, {
    SecretCreated: (e): SecretState => ({
      _tag: "Active",
      secret: {
        secretId: e.secretId,
        workspaceId: e.workspaceId,
        userId: e.userId,
        name: e.name,
        version: 1,
        sealed: e.sealed,
        createdAt: e.at,
        updatedAt: e.at,
        agents: new Map()
      }
    }),
    SecretValueChanged: (e) => active(state, (s) => ({ ...s, version: e.version, sealed: e.sealed, updatedAt: e.at })),
    SecretAttached: (e) => active(state, (s) => ({ ...s, agents: new Map([...s.agents, [e.agentId, e.agentName]]) })),
    SecretDetached: (e) => active(state, (s) => ({ ...s, agents: new Map([...s.agents].filter(([id]) => id !== e.agentId)) })),
    SecretDeleted: (): SecretState => (state._tag === "Active" ? { _tag: "Deleted", secret: state.secret } : state)
  })
