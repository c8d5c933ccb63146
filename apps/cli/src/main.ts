/**
 * Cairn's admin CLI. `workspace create|delete`, `key create|revoke`, `secrets rotate-master-key`, `audit --agent|--file`,
 * `verify` and `template publish|archive` are clients of the running server's admin API (CAIRN_URL). `replay [projection]`
 * and `stats` open the database themselves (DATABASE_URL, or the PGlite in DATA_DIR, which must not be in use by a
 * running server). Exit codes: 0 done, 1 refused (by the server, or a check that found differences), 2 a command
 * line that cannot work, 3 the server cannot be reached.
 */
import * as Main from "@cairn/runtime/Main"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Layer, Logger, Option } from "effect"
import { Argument, CliOutput, Command, Flag } from "effect/cli"
import * as Path from "node:path"
import * as AdminClient from "./AdminClient.ts"
import { engine } from "./EngineCommand.ts"
import { Refused, UsageError } from "./CliErrors.ts"
import * as ReplayReport from "./ReplayReport.ts"

/**
 * What only some commands need is imported when one of them runs: the runtime and the store (`replay`, `stats`),
 * the templates' checks (`template publish`). The commands that talk to the server load none of it, so that they
 * answer in a fraction of a second (`npm run bench:cli`).
 */
const runtime = Effect.promise(() => import("@cairn/runtime"))
const Store = Layer.unwrap(Effect.map(runtime, ({ CairnRuntime }) =>
  Layer.unwrap(Effect.map(CairnRuntime.databaseFromConfig, CairnRuntime.layerStore))))

/**
 * `replay` rebuilds from the log into a fresh schema and compares (changes nothing; exit 1 when any read model
 * differs); `replay --in-place` rebuilds the live tables (decision 0025).
 */
const replay = Command.make(
  "replay",
  {
    projection: Argument.String("projection").pipe(
      Argument.withDescription("A read model (`replay` without one prints them all by name); all when omitted"),
      Argument.optional
    ),
    inPlace: Flag.Boolean("in-place").pipe(
      Flag.withDescription("Rebuild the live tables from the log instead of comparing (an inline one holds appends meanwhile)"),
      Flag.withDefault(false)
    )
  },
  ({ projection, inPlace }) =>
    Effect.gen(function*() {
      const { ReadModels } = yield* runtime
      if (inPlace) {
        const replayed = yield* ReadModels.replay(Option.getOrUndefined(projection))
        for (const { projection, events } of replayed) yield* Console.log(`${projection}: rebuilt from ${events} events`)
        return
      }
      const checked = yield* ReadModels.check(Option.getOrUndefined(projection))
      for (const line of ReplayReport.lines(checked)) yield* Console.log(line)
      const differing = checked.filter((c) => !c.equal).map((c) => c.projection)
      if (differing.length > 0) {
        return yield* new Refused({
          detail: `${differing.length} read model(s) differ from the log: ${differing.join(", ")}. ` +
            `Rebuild with \`replay --in-place <name>\` once the cause is understood.`
        })
      }
    }).pipe(Effect.provide(Store))
).pipe(Command.withDescription("Rebuild read models from the log into a fresh schema and compare them with the live ones (--in-place: rebuild the live ones)"))

const stats = Command.make("stats", {}, () =>
  Effect.gen(function*() {
    const { CategoryStats } = yield* Effect.promise(() => import("@cairn/event-store-pg"))
    const rows = yield* CategoryStats.read
    if (rows.length === 0) yield* Console.log("The log is empty (or category-stats has not caught up: run replay --in-place category-stats)")
    for (const row of rows) {
      yield* Console.log(`${row.category}\t${row.streams} streams\t${row.events} events\tlast ${row.lastRecordedAt.toISOString()}`)
    }
  }).pipe(Effect.provide(Store))
).pipe(Command.withDescription("Print streams and events per stream category"))

const workspaceCreate = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(Flag.withDescription("The workspace's name")),
    plan: Flag.Literals("plan", ["free", "pro"]).pipe(Flag.withDefault("free")),
    agentLimit: Flag.Int("agent-limit").pipe(Flag.withDescription("How many agents it may run"), Flag.optional),
    internal: Flag.Boolean("internal").pipe(Flag.withDescription("An internal account (may use the issues endpoints)"), Flag.withDefault(false))
  },
  ({ name, plan, agentLimit, internal }) =>
    Effect.gen(function*() {
      const workspace = (yield* AdminClient.request("POST", "/admin/workspaces", {
        name,
        plan,
        internal,
        ...Option.match(agentLimit, { onNone: () => ({}), onSome: (n) => ({ agentLimit: n }) })
      })) as { id: string; agentLimit: number }
      yield* Console.log(`Created workspace ${name} (${plan}, agent limit ${workspace.agentLimit}${internal ? ", internal" : ""})`)
      yield* Console.log(workspace.id)
    })
).pipe(Command.withDescription("Create a workspace; prints its id as the last line"))

/** `90s`, `30m`, `1h`, `7d` in seconds. */
const durationSeconds = (text: string) => {
  const match = /^(\d+)\s*(s|m|h|d)$/.exec(text.trim())
  if (!match) return Effect.fail(new UsageError({ detail: `--expires takes a duration such as 90s, 30m, 1h or 7d, not "${text}"` }))
  return Effect.succeed(Number(match[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as "s" | "m" | "h" | "d"])
}

const keyCreate = Command.make(
  "create",
  {
    workspace: Flag.String("workspace").pipe(Flag.withDescription("The workspace id")),
    user: Flag.String("user").pipe(Flag.withDescription("The user the key acts for")),
    scopes: Flag.String("scopes").pipe(Flag.withDescription("Comma-separated: org:files:read, org:files:write, org:groups:read, org:groups:write, org:agents, org:keys")),
    expires: Flag.String("expires").pipe(Flag.withDescription("Lifetime such as 1h or 30d; no expiry when omitted"), Flag.optional)
  },
  ({ workspace, user, scopes, expires }) =>
    Effect.gen(function*() {
      const expiresInSeconds = Option.isSome(expires) ? yield* durationSeconds(expires.value) : undefined
      const created = (yield* AdminClient.request("POST", "/admin/keys", {
        workspaceId: workspace,
        userId: user,
        scopes: scopes.split(",").map((s) => s.trim()).filter((s) => s !== ""),
        ...(expiresInSeconds === undefined ? {} : { expiresInSeconds })
      })) as { keyId: string; token: string }
      yield* Console.log(`Created key ${created.keyId} for ${user} in ${workspace}`)
      yield* Console.log(created.token)
    })
).pipe(Command.withDescription("Issue an API key; prints the JWT as the last line"))

const keyRevoke = Command.make(
  "revoke",
  { keyId: Argument.String("keyId") },
  ({ keyId }) =>
    AdminClient.request("POST", `/admin/keys/${encodeURIComponent(keyId)}/revoke`).pipe(
      Effect.andThen(Console.log(`Revoked key ${keyId}`))
    )
).pipe(Command.withDescription("Revoke an API key"))

/** One line per event: time, stream#version@log position (what `--at` takes), type, actor. */
const printHistory = (path: string) =>
  Effect.gen(function*() {
    const events = (yield* AdminClient.request("GET", path)) as Array<{
      stream: string
      version: number
      position: string
      type: string
      at: string
      actor: string | null
    }>
    for (const event of events) yield* Console.log(`${event.at}\t${event.stream}#${event.version}@${event.position}\t${event.type}\tby ${event.actor ?? "?"}`)
  })

/** The agent as it was at a point, as the admin API answers it (AdminWire.AgentAt). */
interface AgentAt {
  readonly agent: { readonly agentId: string; readonly name: string; readonly status: string; readonly engineVersion: string; readonly createdAt: string; readonly model: string | null }
  readonly workspaceId: string
  readonly lastStop?: { readonly reason: string; readonly at: string }
  readonly secrets: ReadonlyArray<{ readonly name: string; readonly version: number; readonly synced: boolean }>
  readonly skills: ReadonlyArray<{ readonly name: string; readonly revision: number; readonly skillCid: string }>
  readonly domains: ReadonlyArray<{ readonly subdomain: string | null; readonly customDomain: string | null; readonly status: string; readonly targetPort: number }>
  readonly channels: Readonly<Record<string, { readonly configured: boolean; readonly enabled: boolean }>>
  readonly tasks: ReadonlyArray<{ readonly id: string; readonly name: string; readonly enabled: boolean; readonly schedule: { readonly kind: string } }>
  readonly config: { readonly hash: string | null; readonly writtenAt: string | null; readonly changedPaths: ReadonlyArray<string> }
}

/** `audit --agent <id> --at <point>`: one line per thing the agent held then; never a secret's value nor a token. */
const agentAt = (agentId: string, at: string) =>
  Effect.gen(function*() {
    const found = (yield* AdminClient.request("GET", `/admin/agents/${encodeURIComponent(agentId)}?at=${encodeURIComponent(at)}`)) as AgentAt
    const { agent } = found
    yield* Console.log(`agent\t${agent.agentId}\t${agent.name}\tworkspace ${found.workspaceId}\t${agent.status}\tengine ${agent.engineVersion}\tcreated ${agent.createdAt}`)
    if (agent.model !== null) yield* Console.log(`model\t${agent.model}`)
    if (found.lastStop !== undefined) yield* Console.log(`last stop\t${found.lastStop.reason}\t${found.lastStop.at}`)
    for (const s of found.secrets) yield* Console.log(`secret\t${s.name}\tversion ${s.version}${s.synced ? "" : "\tnot synced"}`)
    for (const s of found.skills) yield* Console.log(`skill\t${s.name}\trevision ${s.revision}\t${s.skillCid}`)
    for (const d of found.domains) yield* Console.log(`domain\t${d.subdomain ?? d.customDomain}\t${d.status}\tport ${d.targetPort}`)
    for (const [name, c] of Object.entries(found.channels)) if (c.configured) yield* Console.log(`channel\t${name}\t${c.enabled ? "enabled" : "disabled"}`)
    for (const t of found.tasks) yield* Console.log(`task\t${t.id}\t${t.name}\t${t.schedule.kind}\t${t.enabled ? "enabled" : "disabled"}`)
    if (found.config.hash !== null) yield* Console.log(`config\thash ${found.config.hash}\twritten ${found.config.writtenAt}\tchanged ${found.config.changedPaths.join(",")}`)
  })

const agentHistory = (agentId: string) => printHistory(`/admin/agents/${encodeURIComponent(agentId)}/events`)
const fileHistory = (cid: string) => printHistory(`/admin/files/${encodeURIComponent(cid)}/events`)

// The older spelling, `audit agent <id>`, kept working.
const auditAgent = Command.make("agent", { agentId: Argument.String("agentId") }, ({ agentId }) => agentHistory(agentId)).pipe(
  Command.withDescription("Print an agent's history (the same as audit --agent <id>)")
)

interface LogVerified {
  readonly ok: boolean
  readonly blocks: number
  readonly events: number
  readonly unsealed: number
  readonly chain: { readonly introducedAt: string; readonly backfilledThrough: string | null } | null
  readonly broken: { readonly block: number; readonly position: string | null; readonly stream: string | null; readonly version: number | null; readonly problem: string } | null
}

/** `verify`: the server checks the whole log against its seals (docs/audit-proofs.md); exit 1 names the first broken link. */
const verify = Command.make("verify", {}, () =>
  Effect.gen(function*() {
    const report = (yield* AdminClient.request("POST", "/admin/audit/verify")) as LogVerified
    if (report.chain !== null) {
      yield* Console.log(`chain\tintroduced ${report.chain.introducedAt}\tbackfilled through ${report.chain.backfilledThrough ?? "(not yet)"}`)
    }
    yield* Console.log(`checked\t${report.events} events in ${report.blocks} blocks\t${report.unsealed} recorded since the last block`)
    const { broken } = report
    if (broken !== null) {
      const where = broken.position === null ? `block ${broken.block}` : `block ${broken.block}, event ${broken.position} (${broken.stream} version ${broken.version})`
      return yield* new Refused({ detail: `the log is broken at ${where}: ${broken.problem}` })
    }
    yield* Console.log("ok")
  })).pipe(Command.withDescription("Check every event's hash and every sealed block of the log (exit 1 names the first broken link)"))

const workspaceDelete = Command.make(
  "delete",
  { workspaceId: Argument.String("workspaceId") },
  ({ workspaceId }) =>
    AdminClient.request("DELETE", `/admin/workspaces/${encodeURIComponent(workspaceId)}`).pipe(
      Effect.andThen(Console.log(`Deleted workspace ${workspaceId}: its keys are revoked and its secrets' data key is destroyed`))
    )
).pipe(Command.withDescription("Delete a workspace with no agents; its secrets become unreadable for good"))

const rotateMasterKey = Command.make("rotate-master-key", {}, () =>
  Effect.gen(function*() {
    const rotated = (yield* AdminClient.request("POST", "/admin/secrets/rotate-master-key")) as { masterKeyId: string; rewrapped: number }
    yield* Console.log(`Rewrapped ${rotated.rewrapped} workspace data key(s) under master key ${rotated.masterKeyId}`)
  })).pipe(Command.withDescription("Rewrap every workspace's data key under a new master key (online; values are not re-encrypted)"))

interface Published {
  readonly template: { readonly templateId: string; readonly slug: string; readonly version: number; readonly featured: boolean }
  readonly created: boolean
  readonly changed: boolean
}

/**
 * `template publish <dir>`: a folder is checked here first (every error printed, not only the first), then sent to
 * the admin API, which publishes it as a public template; a changed folder under the same slug is its next version.
 */
const templatePublish = Command.make(
  "publish",
  {
    dir: Argument.String("dir").pipe(Argument.withDescription("The template folder: manifest.json and the workspace files")),
    slug: Flag.String("slug").pipe(Flag.withDescription("Its slug; the manifest's template.slug or one made from its name otherwise"), Flag.optional),
    name: Flag.String("name").pipe(Flag.withDescription("Its name; the manifest's agent.name otherwise"), Flag.optional),
    featured: Flag.Boolean("featured").pipe(Flag.withDescription("List it among the featured templates"), Flag.withDefault(false))
  },
  ({ dir, slug, name, featured }) =>
    Effect.gen(function*() {
      const root = Path.resolve(dir)
      const [{ validateTemplate }, { Catalog }] = yield* Effect.promise(() => Promise.all([import("@cairn/templates"), import("@cairn/templates/node")]))
      const files = yield* Effect.tryPromise({
        try: () => Catalog.readFolder(root),
        catch: (cause) => new Refused({ detail: `cannot read ${root} (${String(cause)})` })
      })
      const checked = validateTemplate(files)
      if (!checked.valid) {
        return yield* new Refused({ detail: `${root} is not a valid template:\n  ${checked.errors.join("\n  ")}` })
      }
      const published = (yield* AdminClient.request("POST", "/admin/templates", {
        files: checked.files.map((file) => ({ path: file.path, contentBase64: Buffer.from(file.content).toString("base64") })),
        featured,
        ...Option.match(slug, { onNone: () => ({}), onSome: (s) => ({ slug: s }) }),
        ...Option.match(name, { onNone: () => ({}), onSome: (n) => ({ name: n }) })
      })) as Published
      const { template } = published
      const what = published.created ? "Published" : published.changed ? `Published version ${template.version} of` : "Unchanged:"
      yield* Console.log(`${what} template ${template.slug}${template.featured ? " (featured)" : ""}, ${checked.files.length} files`)
      yield* Console.log(template.templateId)
    })
).pipe(Command.withDescription("Publish a folder as a public template (or its next version); prints its id as the last line"))

const templateArchive = Command.make(
  "archive",
  { templateId: Argument.String("templateId") },
  ({ templateId }) =>
    AdminClient.request("DELETE", `/admin/templates/${encodeURIComponent(templateId)}`).pipe(
      Effect.andThen(Console.log(`Archived template ${templateId}: it is no longer listed or used for new agents`))
    )
).pipe(Command.withDescription("Archive a template, whoever published it"))

const audit = Command.make(
  "audit",
  {
    agent: Flag.String("agent").pipe(Flag.withDescription("An agent's id: its events and what was done inside it"), Flag.optional),
    file: Flag.String("file").pipe(Flag.withDescription("A CID (every file of it, in any workspace, and its signatures) or a file id"), Flag.optional),
    at: Flag.String("at").pipe(
      Flag.withDescription("With --agent: the agent as it was then (an ISO time, or a log position transactionId:globalPosition from its history)"),
      Flag.optional
    )
  },
  ({ agent, file, at }) =>
    Option.isSome(at)
      ? Option.isSome(agent) && Option.isNone(file)
        ? agentAt(agent.value, at.value)
        : Effect.fail(new UsageError({ detail: "--at goes with --agent <id>" }))
      : Option.isSome(agent) && Option.isNone(file)
      ? agentHistory(agent.value)
      : Option.isSome(file) && Option.isNone(agent)
      ? fileHistory(file.value)
      : Effect.fail(new UsageError({ detail: "audit takes one of --agent <id> and --file <cid>" }))
).pipe(
  Command.withDescription("Print the history of an agent or a file: every event with its time and actor"),
  Command.withSubcommands([auditAgent])
)
const secrets = Command.make("secrets").pipe(Command.withSubcommands([rotateMasterKey]))
const workspace = Command.make("workspace").pipe(Command.withSubcommands([workspaceCreate, workspaceDelete]))
const key = Command.make("key").pipe(Command.withSubcommands([keyCreate, keyRevoke]))
const template = Command.make("template").pipe(Command.withSubcommands([templatePublish, templateArchive]))

/**
 * A command line that cannot work (a flag missing, a value malformed, a command named without its subcommand:
 * `cairn key`) prints its help and the errors on stderr, and exits 2 (Main.reportFailure), so that a script's
 * `$(cairn … | tail -n 1)` never takes a help line for a command's output; only help asked for (`--help`) is
 * printed on stdout, with exit 0.
 */
const usageOnStderr = CliOutput.layerPresenter({
  present: (event) =>
    event._tag === "InvalidInvocation" || (event._tag === "Help" && event.reason !== "Requested")
      ? Console.consoleWith((console) =>
        CliOutput.defaultPresenter.present(event).pipe(Effect.provideService(Console.Console, { ...console, log: console.error }))
      )
      : CliOutput.defaultPresenter.present(event)
})

Command.make("cairn").pipe(
  Command.withDescription("Administer a Cairn installation"),
  Command.withSubcommands([workspace, key, secrets, audit, verify, replay, stats,
    template, engine]),
  Command.run({ version: "0.1.0" }),
  Effect.provide(Layer.merge(NodeServices.layer, usageOnStderr)),
  // stdout carries the command's output; logs go to stderr.
  Effect.provideService(Logger.LogToStderr, true),
  Main.reportFailure,
  NodeRuntime.runMain
)
