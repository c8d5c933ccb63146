/**
 * The options of an upload, as the pinata SDK sends them: multipart form fields, or the base64 pairs of a
 * resumable upload's `Upload-Metadata` header (same keys). Unknown keys are ignored; options Cairn does not
 * implement (`car`, `expires_at`) are refused rather than silently dropped.
 */
import { File, Network, ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"

const Raw = Schema.Struct({
  network: Schema.optional(Network),
  name: Schema.optional(Schema.String),
  filename: Schema.optional(Schema.String),
  filetype: Schema.optional(Schema.String),
  group_id: Schema.optional(Schema.String),
  keyvalues: Schema.optional(Schema.String),
  cid_version: Schema.optional(Schema.Literals(["v0", "v1"])),
  car: Schema.optional(Schema.String),
  expires_at: Schema.optional(Schema.String)
})

export interface UploadOptions {
  readonly network: Network
  readonly name: string | undefined
  readonly mimeType: string | undefined
  readonly groupId: string | null
  readonly keyvalues: File.KeyValues
  readonly cidVersion: 0 | 1
}

const decodeKeyValues = Schema.decodeUnknownEffect(Schema.fromJsonString(File.KeyValues))

export const decode = (fields: Record<string, string>) =>
  Effect.gen(function*() {
    const raw = yield* Schema.decodeUnknownEffect(Raw)(fields)
    if (raw.car === "true") return yield* new ValidationFailed({ detail: "CAR uploads are not supported" })
    if (raw.expires_at !== undefined) return yield* new ValidationFailed({ detail: "expires_at is not supported" })
    const keyvalues = raw.keyvalues === undefined
      ? {}
      : yield* decodeKeyValues(raw.keyvalues).pipe(
        Effect.mapError(() => new ValidationFailed({ detail: "keyvalues must be a JSON object of string values" }))
      )
    return {
      // Pinata's uploads API defaults to the private network.
      network: raw.network ?? "private",
      name: raw.name ?? raw.filename,
      mimeType: raw.filetype,
      groupId: raw.group_id === undefined || raw.group_id === "" ? null : raw.group_id,
      keyvalues,
      cidVersion: raw.cid_version === "v0" ? 0 : 1
    } satisfies UploadOptions
  })
