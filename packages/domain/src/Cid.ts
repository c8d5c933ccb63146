/**
 * A content identifier, checked with `multiformats` and kept in its canonical string form (CIDv0 as `Qm…`, CIDv1
 * in base32), so one CID always names one stream and one row whatever base the caller wrote it in.
 */
import { Effect, Option, Schema, SchemaGetter, SchemaIssue } from "effect"
import { base32 } from "multiformats/bases/base32"
import { CID } from "multiformats/cid"

/** The canonical form of a CID string, or none when it is not one. */
export const canonical = (input: string): Option.Option<string> => {
  const trimmed = input.trim()
  try {
    // The common case, a CIDv1 already in base32: it is its own canonical form (the decoder takes only the lowercase
    // alphabet and refuses stray trailing bits), so the bytes are only checked. CID.parse would also remember the
    // string in a per-CID cache, a measurable cost on every request that names a CID (docs/performance.md).
    if (trimmed.startsWith("b")) {
      const cid = CID.decode(base32.decode(trimmed))
      if (cid.version === 1) return Option.some(trimmed)
    }
    const cid = CID.parse(trimmed)
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
