/**
 * Young-generation collections paced by the body bytes an upload reads. Node's HTTP parser hands a body over as fresh
 * 64 KiB buffers whose memory lives outside the JS heap; they die at once, but only a collection frees that memory,
 * and reading a body allocates so few JS objects per byte that the young generation (up to 32 MiB a semi-space) hardly
 * ever fills. The buffers' memory then piles up until V8 starts a full mark-compact of the whole heap for it: three or
 * four per 99 MiB upload, half the upload's CPU (docs/performance.md, "bench:upload"). A scavenge every few MiB frees
 * the same buffers for a fraction of the cost: it visits only the young objects still alive. The collector is V8's
 * `gc` (`--expose-gc`, read from a fresh context, the flag then turned off again, as jest's leak detector does);
 * where it cannot be had (Bun, Deno), nothing is collected and the runtime's own collector does as before.
 */
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

type Gc = (options: { readonly type: "minor"; readonly execution: "sync" }) => void

/** Body bytes between two young-generation collections. */
export const bytesPerYoungCollection = Number(process.env["CAIRN_YOUNG_GC_BYTES"] ?? 8 * 1024 * 1024)

let collector: Gc | undefined | null = null
let sinceLast = 0

const load = (): Gc | undefined => {
  try {
    if (typeof globalThis.process?.versions?.node !== "string" || "Bun" in globalThis || "Deno" in globalThis) return undefined
    const hidden = typeof (globalThis as { readonly gc?: unknown }).gc !== "function"
    setFlagsFromString("--expose-gc")
    const gc: unknown = runInNewContext("gc")
    // Contexts made from now on (vm, workers) get no global `gc` unless the process was started with one.
    if (hidden) setFlagsFromString("--no-expose-gc")
    return typeof gc === "function" ? (gc as Gc) : undefined
  } catch {
    return undefined
  }
}

/** Counts body bytes read; every `bytesPerYoungCollection` of them, collects the young generation. */
export const bodyBytesRead = (bytes: number): void => {
  sinceLast += bytes
  if (sinceLast < bytesPerYoungCollection || bytesPerYoungCollection <= 0) return
  sinceLast = 0
  if (collector === null) collector = load()
  collector?.({ type: "minor", execution: "sync" })
}
