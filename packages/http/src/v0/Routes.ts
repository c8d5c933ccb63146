/** Every `/v0` routes module, listed once. A new resource adds its module here. */
import { Layer } from "effect"
import * as AgentsRoutes from "./AgentsRoutes.ts"
import * as AuditRoutes from "./AuditRoutes.ts"
import * as ChannelsRoutes from "./ChannelsRoutes.ts"
import * as ChatRoutes from "./ChatRoutes.ts"
import * as ConfigRoutes from "./ConfigRoutes.ts"
import * as ConsoleRoutes from "./ConsoleRoutes.ts"
import * as EngineRoutes from "./EngineRoutes.ts"
import * as DomainsRoutes from "./DomainsRoutes.ts"
import * as FilesRoutes from "./FilesRoutes.ts"
import * as IssuesRoutes from "./IssuesRoutes.ts"
import * as LogsRoutes from "./LogsRoutes.ts"
import * as SecretsRoutes from "./SecretsRoutes.ts"
import * as SkillsRoutes from "./SkillsRoutes.ts"
import * as SnapshotsRoutes from "./SnapshotsRoutes.ts"
import * as TasksRoutes from "./TasksRoutes.ts"
import * as TemplatesRoutes from "./TemplatesRoutes.ts"

export const layer = Layer.mergeAll(AgentsRoutes.layer, SecretsRoutes.layer, SkillsRoutes.layer, IssuesRoutes.layer,
  TemplatesRoutes.layer, ConsoleRoutes.layer, FilesRoutes.layer, ConfigRoutes.layer,
  TasksRoutes.layer, SnapshotsRoutes.layer, ChannelsRoutes.layer, DomainsRoutes.layer, LogsRoutes.layer, ChatRoutes.layer, EngineRoutes.layer, AuditRoutes.layer)
