/**
 * A content identifier, checked with `multiformats` and kept in its canonical string form (CIDv0 as `Qm…`, CIDv1
 * in base32), so one CID always names one stream and one row whatever base the caller wrote it in.
 */
import { Effect, Option, Schema, SchemaGetter, SchemaIssue } from "effect"
import { CID } from "multiformats/cid"

/** The canonical form of a CID string, or none when it is not one. */
export const canonical = (input: string): Option.Option<string> => {
  try {
    const cid = CID.parse(input.trim())
    return Option.some(cid.version === 0 ? cid.toString() : cid.toV1().toString())
  } catch {
    return Option.none()
  }
}

/** Decodes any CID string into its canonical form; anything else fails with "… is not a valid CID". */
export const Cid = Schema.String.pipe(
  Schema.decodeTo(Schema.String, {
    // One parse per decode: it both checks the CID and gives its canonical form.
    decode: SchemaGetter.transformEffect((input: string) =>
      Option.match(canonical(input), {
        onNone: () => Effect.fail(new SchemaIssue.InvalidValue({ message: `"${input}" is not a valid CID` }, input)),
        onSome: Effect.succeed
      })
    ),
    encode: SchemaGetter.passthrough()
  })
)
export type Cid = typeof Cid.Type
