/** A template as its history leaves it: its current version, who published it and who may see it. */
import type { IncludedSkill, Publisher, RequiredSecret, Visibility } from "./Events.ts"

export interface Template {
  readonly templateId: string
  readonly slug: string
  /** 1 when published, one more per new version. */
  readonly version: number
  readonly name: string
  readonly description: string
  readonly category: string
  readonly tags: ReadonlyArray<string>
  readonly snapshotCid: string
  readonly manifest: unknown
  readonly requiredSecrets: ReadonlyArray<RequiredSecret>
  readonly includedSkills: ReadonlyArray<IncludedSkill>
  readonly openclawVersion: string | null
  readonly gitUrl: string | undefined
  readonly gitRef: string | undefined
  readonly gitPath: string | undefined
  readonly gitCommitSha: string | undefined
  readonly visibility: Visibility
  readonly featured: boolean
  readonly publisher: Publisher
  readonly workspaceId: string | null
  readonly userId: string
  readonly createdAt: string
  readonly updatedAt: string
}

export type TemplateState =
  | { readonly _tag: "NoTemplate" }
  | { readonly _tag: "Published"; readonly template: Template }
  | { readonly _tag: "Archived"; readonly template: Template }

export const initial: TemplateState = { _tag: "NoTemplate" }
