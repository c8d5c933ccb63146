/**
 * What the operator API (`/admin`, AdminRoutes.ts) answers, in the `{data}` envelope: the Schemas its catalog
 * entries document, and the response check of the HTTP tests holds its answers to.
 */
import { Secret, Workspace } from "@cairn/domain"
import { Schema } from "effect"
import { AgentDetailWire, HistoryEntryWire } from "./v0/AgentsRoutes.ts"
import { TemplateWire } from "./v0/TemplatesRoutes.ts"

const envelope = <S extends Schema.Top>(schema: S) => Schema.Struct({ data: schema })

/** A workspace as the admin API shows it. */
export const WorkspaceCreated = envelope(Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  plan: Workspace.Plan,
  agentLimit: Schema.Int,
  internal: Schema.Boolean,
  createdAt: Schema.String
}))

/** The master key every workspace data key is wrapped under now, and how many were rewrapped. */
export const MasterKeyRotated = envelope(Schema.Struct({ masterKeyId: Schema.String, rewrapped: Schema.Int }))

/** An issued API key: its id (to revoke it) and the token, shown this once. */
export const KeyIssued = envelope(Schema.Struct({ keyId: Schema.String, token: Schema.String }))

/** An audit trail: every event with its stream, its place in it, its actor and time, in log order. */
export const AuditTrail = envelope(Schema.Array(HistoryEntryWire))

/**
 * An agent as it was at a point of the log, whatever its workspace (`cli audit --agent <id> --at <point>`): the agent
 * route's detail with its workspace, and its domains, channels, tasks and config as the `?at=` routes show them.
 */
export const AgentAt = envelope(Schema.Struct({
  ...AgentDetailWire.fields,
  workspaceId: Schema.String,
  domains: Schema.Array(Schema.Unknown),
  channels: Schema.Unknown,
  tasks: Schema.Array(Schema.Unknown),
  config: Schema.Struct({ hash: Schema.NullOr(Schema.String), writtenAt: Schema.NullOr(Schema.String), changedPaths: Schema.Array(Schema.String) })
}))

/** A published template: whether it is new (201) and whether this version differs from the one before. */
export const TemplatePublished = envelope(Schema.Struct({ template: TemplateWire, created: Schema.Boolean, changed: Schema.Boolean }))


/** A rotation without a master key configured. */
export const rotateMasterKeyErrors = [new Secret.SecretsNotConfigured()]

/** `cairn verify`: the whole log checked against its seals (docs/audit-proofs.md). */
export const LogVerified = envelope(Schema.Struct({
  ok: Schema.Boolean,
  blocks: Schema.Number,
  events: Schema.Number,
  unsealed: Schema.Number,
  chain: Schema.NullOr(Schema.Struct({ introducedAt: Schema.String, backfilledThrough: Schema.NullOr(Schema.String) })),
  broken: Schema.NullOr(Schema.Struct({
    block: Schema.Number,
    position: Schema.NullOr(Schema.String),
    stream: Schema.NullOr(Schema.String),
    version: Schema.NullOr(Schema.Number),
    problem: Schema.String
  }))
}))
