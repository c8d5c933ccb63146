/**
 * Content types from content: the file's magic bytes (`file-type`), else text when the sample is valid UTF-8
 * without NUL bytes, else `application/octet-stream`. Used by the gateway, and for uploads whose client gave no
 * specific type. `file-type` is loaded at the first sniff, not at start (it is not needed to answer anything else).
 */
import { Effect, Stream } from "effect"

let fileType: Promise<typeof import("file-type")> | undefined
const loadFileType = () => (fileType ??= import("file-type"))

const generic = new Set(["", "application/octet-stream"])

/** Whether a client-given type says nothing, so sniffing may do better. */
export const isGeneric = (type: string | undefined) => type === undefined || generic.has(type.split(";")[0]!.trim().toLowerCase())

const isText = (sample: Uint8Array) => {
  if (sample.includes(0)) return false
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(sample.subarray(0, Math.min(sample.length, 4096)))
    return true
  } catch {
    // A multi-byte character cut at the sample's end is still text.
    return sample.length >= 4096
  }
}

export const sniff = (sample: Uint8Array) =>
  Effect.promise(() => loadFileType().then(({ fileTypeFromBuffer }) => fileTypeFromBuffer(sample))).pipe(
    Effect.map((type) => type?.mime ?? (sample.length > 0 && isText(sample) ? "text/plain; charset=utf-8" : "application/octet-stream"))
  )

/** Sniffs the first chunk of a stream. */
export const sniffStream = <E, R>(content: Stream.Stream<Uint8Array, E, R>) =>
  content.pipe(Stream.take(1), Stream.runCollect, Effect.flatMap((first) => sniff(first[0] ?? new Uint8Array())))
