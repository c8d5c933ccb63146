/**
 * A manifest v1 as `validateTemplate` leaves it (valid against `ManifestSchema.schema`), and what the catalog reads
 * off it: the template's name, description, category, tags, the secrets it requires and the skills it includes.
 */

export interface ManifestAgent {
  readonly name: string
  readonly description?: string
  readonly vibe?: string
  readonly emoji?: string
}

export interface ManifestSecret {
  readonly name: string
  readonly description?: string
  readonly guideUrl?: string
  readonly guideSteps?: ReadonlyArray<string>
  /** True when left out. */
  readonly required?: boolean
}

export type ManifestSkill =
  | { readonly name: string; readonly clawhub_slug: string }
  | { readonly name: string; readonly cid: string }

export type TaskSchedule =
  | { readonly kind: "cron"; readonly expr: string; readonly tz?: string; readonly exact?: boolean; readonly staggerMs?: number }
  | { readonly kind: "every"; readonly everyMs: number; readonly staggerMs?: number }
  | { readonly kind: "at"; readonly at: string }

export type TaskPayload =
  | { readonly kind: "agentTurn"; readonly text: string; readonly model?: string; readonly thinking?: string; readonly timeoutSeconds?: number }
  | { readonly kind: "systemEvent"; readonly message: string }

/** The tasks API's shape. */
export interface FullTask {
  readonly name: string
  readonly description?: string
  readonly enabled?: boolean
  readonly schedule: TaskSchedule
  readonly sessionTarget?: "main" | "isolated"
  readonly wakeMode?: "now" | "next-heartbeat"
  readonly payload: TaskPayload
  readonly delivery?: { readonly mode?: "none" | "announce" | "webhook"; readonly channel?: string; readonly to?: string; readonly bestEffort?: boolean }
}

/** Pinata's simplified task: `schedule` is a cron expression, `prompt` what the agent is asked. */
export interface SimpleTask {
  readonly name: string
  readonly description?: string
  readonly prompt: string
  readonly schedule: string
  readonly tz?: string
  readonly enabled?: boolean
}

export type ManifestTask = FullTask | SimpleTask

export interface ManifestRoute {
  readonly port: number
  readonly path?: string
  readonly protected?: boolean
}

type DmPolicy = "open" | "pairing"

export interface ManifestChannels {
  readonly telegram?: { readonly enabled?: boolean; readonly botToken: string; readonly dmPolicy?: DmPolicy; readonly allowFrom?: ReadonlyArray<string> }
  readonly slack?: {
    readonly enabled?: boolean
    readonly botToken: string
    readonly appToken: string
    readonly dmPolicy?: DmPolicy
    readonly allowFrom?: ReadonlyArray<string>
  }
  readonly discord?: {
    readonly enabled?: boolean
    readonly botToken: string
    readonly applicationId?: string
    readonly dmPolicy?: DmPolicy
    readonly allowFrom?: ReadonlyArray<string>
  }
  readonly whatsapp?: { readonly enabled?: boolean; readonly dmPolicy: DmPolicy; readonly allowFrom: ReadonlyArray<string> }
}

export interface Manifest {
  readonly $schema?: string
  readonly version: 1
  readonly engine?: "openclaw" | "hermes"
  readonly agent: ManifestAgent
  readonly model?: string | { readonly primary?: string | null }
  readonly openclawVersion?: string
  readonly category?: string
  readonly tags?: ReadonlyArray<string>
  /** Pinata's marketplace block; its slug, category and tags are used when the top-level ones are absent. */
  readonly template?: {
    readonly slug?: string
    readonly category?: string
    readonly tags?: ReadonlyArray<string>
    readonly authorName?: string
    readonly authorUrl?: string
    readonly authorLogoUrl?: string
  }
  readonly secrets?: ReadonlyArray<ManifestSecret>
  readonly skills?: ReadonlyArray<ManifestSkill>
  readonly tasks?: ReadonlyArray<ManifestTask>
  readonly scripts?: { readonly build?: string; readonly start?: string }
  readonly routes?: ReadonlyArray<ManifestRoute>
  readonly channels?: ManifestChannels
}

/** Whether a task is Pinata's simplified shape. */
export const isSimpleTask = (task: ManifestTask): task is SimpleTask => typeof task.schedule === "string"

/** The category a template is listed under when its manifest names none. */
export const defaultCategory = "general"

/** A secret the template needs, as the catalog lists it. */
export interface RequiredSecret {
  readonly name: string
  readonly description: string | null
  readonly guideUrl: string | null
  readonly required: boolean
}

/** A skill the template brings: a stored folder (`cid`) or a ClawHub slug. */
export interface IncludedSkill {
  readonly name: string
  readonly cid?: string
  readonly clawhubSlug?: string
}

/** What the catalog shows of a template, read off its manifest. */
export interface Listing {
  readonly name: string
  readonly description: string
  readonly category: string
  readonly tags: ReadonlyArray<string>
  /** The slug the manifest asks for (`template.slug`), if any. */
  readonly slug: string | undefined
  readonly openclawVersion: string | undefined
  readonly requiredSecrets: ReadonlyArray<RequiredSecret>
  readonly includedSkills: ReadonlyArray<IncludedSkill>
}

export const listingOf = (manifest: Manifest): Listing => ({
  name: manifest.agent.name,
  description: manifest.agent.description ?? manifest.agent.vibe ?? "",
  category: manifest.category ?? manifest.template?.category ?? defaultCategory,
  tags: manifest.tags ?? manifest.template?.tags ?? [],
  slug: manifest.template?.slug,
  openclawVersion: manifest.openclawVersion,
  requiredSecrets: (manifest.secrets ?? []).map((secret) => ({
    name: secret.name,
    description: secret.description ?? null,
    guideUrl: secret.guideUrl ?? null,
    required: secret.required ?? true
  })),
  includedSkills: (manifest.skills ?? []).map((skill) =>
    "cid" in skill ? { name: skill.name, cid: skill.cid } : { name: skill.name, clawhubSlug: skill.clawhub_slug }
  )
})

/**
 * A manifest task as the tasks API takes it (`POST /v0/agents/{id}/tasks`): the full shape as it is, Pinata's simple
 * one as a cron schedule and an agent turn with its prompt, in an isolated session (where agent turns run).
 */
export const taskBody = (task: ManifestTask): FullTask =>
  isSimpleTask(task)
    ? {
      name: task.name,
      ...(task.description === undefined ? {} : { description: task.description }),
      ...(task.enabled === undefined ? {} : { enabled: task.enabled }),
      schedule: { kind: "cron", expr: task.schedule, ...(task.tz === undefined ? {} : { tz: task.tz }) },
      sessionTarget: "isolated",
      payload: { kind: "agentTurn", text: task.prompt }
    }
    : task
