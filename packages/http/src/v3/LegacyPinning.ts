/**
 * Pinata's legacy `POST /pinning/pinFileToIPFS`, which the pinata SDK's `upload.public.fileArray(files)` still
 * posts to (its `legacyUploadUrl`): `file` parts (named `<folder>/<name>` for a folder), `pinataMetadata` as JSON
 * `{name, keyvalues}`, `pinataOptions` as JSON `{groupId, cidVersion, wrapWithDirectory}`; always the public network.
 * The answer is flat, not in the `{data}` envelope: `{ID, Name, IpfsHash, PinSize, Timestamp, NumberOfFiles,
 * MimeType, GroupId, Keyvalues, isDuplicate}`.
 */
import type { FileView } from "@cairn/application"
import { File, ValidationFailed } from "@cairn/domain"
import { Effect, Schema } from "effect"

/** Key-values as the legacy `@pinata/sdk` sends them: numbers and booleans are kept as their text. */
const Metadata = Schema.fromJsonString(Schema.Struct({
  name: Schema.optional(Schema.NullOr(Schema.String)),
  keyvalues: Schema.optional(Schema.NullOr(Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Number, Schema.Boolean]))))
}))

const Options = Schema.fromJsonString(Schema.Struct({
  groupId: Schema.optional(Schema.NullOr(Schema.String)),
  cidVersion: Schema.optional(Schema.Union([Schema.Literals([0, 1]), Schema.Literals(["0", "1"])])),
  wrapWithDirectory: Schema.optional(Schema.Boolean)
}))

export interface LegacyOptions {
  readonly name: string | undefined
  readonly keyvalues: File.KeyValues
  readonly groupId: string | null
  readonly cidVersion: 0 | 1
  readonly wrapWithDirectory: boolean
}

/** The form's `pinataMetadata` and `pinataOptions`, both optional. Pinata's legacy API defaults to CIDv0. */
export const decode = (fields: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const metadata = fields["pinataMetadata"] === undefined ? {} : yield* Schema.decodeUnknownEffect(Metadata)(fields["pinataMetadata"]).pipe(
      Effect.mapError(() => new ValidationFailed({ detail: "pinataMetadata must be JSON {name, keyvalues} with string, number or boolean key-values" }))
    )
    const options = fields["pinataOptions"] === undefined ? {} : yield* Schema.decodeUnknownEffect(Options)(fields["pinataOptions"]).pipe(
      Effect.mapError(() => new ValidationFailed({ detail: "pinataOptions must be JSON {groupId, cidVersion: 0 or 1, wrapWithDirectory}" }))
    )
    return {
      name: metadata.name === null || metadata.name === "" ? undefined : metadata.name,
      keyvalues: Object.fromEntries(Object.entries(metadata.keyvalues ?? {}).map(([key, value]) => [key, String(value)])),
      groupId: options.groupId === undefined || options.groupId === "" ? null : options.groupId,
      cidVersion: options.cidVersion === 1 || options.cidVersion === "1" ? 1 : 0,
      wrapWithDirectory: options.wrapWithDirectory ?? false
    } satisfies LegacyOptions
  })

/** The flat legacy answer, which the SDK maps field by field onto its UploadResponse. */
export const LegacyWire = Schema.Struct({
  ID: Schema.String,
  Name: Schema.String,
  IpfsHash: Schema.String,
  PinSize: Schema.Int,
  Timestamp: Schema.String,
  NumberOfFiles: Schema.Int,
  MimeType: Schema.String,
  GroupId: Schema.NullOr(Schema.String),
  Keyvalues: File.KeyValues,
  isDuplicate: Schema.Boolean
})

export const toLegacyWire = (file: FileView): typeof LegacyWire.Type => ({
  ID: file.id,
  Name: file.name,
  IpfsHash: file.cid,
  PinSize: file.size,
  Timestamp: file.createdAt,
  NumberOfFiles: file.numberOfFiles,
  MimeType: file.mimeType,
  GroupId: file.groupId,
  Keyvalues: file.keyvalues,
  isDuplicate: false
})
