/**
 * Inflates deflate or gzip data with fflate's streaming classes, counting the output as it comes and stopping as
 * soon as it passes a cap: a zip bomb costs at most one small input slice's worth of output beyond the cap, never
 * what its headers claim.
 */
import { type FlateStreamHandler, Gunzip, Inflate } from "fflate"
import { Result } from "effect"

export type InflateFailure = "over" | "corrupt"

// One slice inflates to at most ~1032 times its size (deflate's best ratio), so 4 KiB bounds the overshoot at ~4 MiB.
const SLICE = 4096

const run = (
  make: (ondata: FlateStreamHandler) => { push: (chunk: Uint8Array, final?: boolean) => void },
  input: Uint8Array,
  cap: number
): Result.Result<Uint8Array, InflateFailure> => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  const stream = make((chunk) => {
    size += chunk.length
    if (size <= cap) chunks.push(chunk)
  })
  try {
    if (input.length === 0) stream.push(input, true)
    for (let offset = 0; offset < input.length && size <= cap; offset += SLICE) {
      stream.push(input.subarray(offset, offset + SLICE), offset + SLICE >= input.length)
    }
  } catch {
    return Result.fail("corrupt")
  }
  if (size > cap) return Result.fail("over")
  const output = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    output.set(chunk, at)
    at += chunk.length
  }
  return Result.succeed(output)
}

/** Raw deflate (a zip entry's method 8). */
export const inflate = (input: Uint8Array, cap: number) => run((ondata) => new Inflate(ondata), input, cap)

/** A gzip stream (a `.tar.gz`). */
export const gunzip = (input: Uint8Array, cap: number) => run((ondata) => new Gunzip(ondata), input, cap)
