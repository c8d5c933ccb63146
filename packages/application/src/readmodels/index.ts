/**
 * Every inline read model, listed once: each is a table kept in the append's transaction (so a read right after a
 * write sees it) with the queries services make of it, and each is rebuilt from the log by `cli replay --in-place <name>`.
 */
import type { Projection } from "@cairn/event-store"
import type { SqlClient } from "effect/sql"
import * as AgentsTable from "./AgentsTable.ts"
import * as AuditWebhooksTable from "./AuditWebhooksTable.ts"
import * as DomainsTable from "./DomainsTable.ts"
import * as ApiKeysTable from "./ApiKeysTable.ts"
import * as ChannelsTable from "./ChannelsTable.ts"
import * as FilesTable from "./FilesTable.ts"
import * as GroupsTable from "./GroupsTable.ts"
import * as IssuesTable from "./IssuesTable.ts"
import * as PinJobsTable from "./PinJobsTable.ts"
import * as SecretsTable from "./SecretsTable.ts"
import * as SignaturesTable from "./SignaturesTable.ts"
import * as SkillsTable from "./SkillsTable.ts"
import * as SnapshotsTable from "./SnapshotsTable.ts"
import * as TemplatesTable from "./TemplatesTable.ts"
import * as TemplateTasksTable from "./TemplateTasksTable.ts"
import * as WorkspacesTable from "./WorkspacesTable.ts"

export { AgentsTable, ApiKeysTable, FilesTable, IssuesTable, SecretsTable, SignaturesTable, SkillsTable, WorkspacesTable }
export { SnapshotsTable, TemplatesTable }
export { DomainsTable }
export { GroupsTable }
export { ChannelsTable }
export { PinJobsTable }
export { TemplateTasksTable }
export { AuditWebhooksTable }

export const all: ReadonlyArray<Projection<SqlClient.SqlClient>> = [
  WorkspacesTable.projection,
  ApiKeysTable.projection,
  FilesTable.projection,
  GroupsTable.projection,
  SignaturesTable.projection,
  AgentsTable.projection,
  SecretsTable.projection,
  SkillsTable.projection,
  IssuesTable.projection,
  TemplatesTable.projection,
  SnapshotsTable.projection,
  DomainsTable.projection,
  ChannelsTable.projection,
  PinJobsTable.projection,
  TemplateTasksTable.projection,
  AuditWebhooksTable.projection
]
