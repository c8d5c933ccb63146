/**
 * PGlite's two large artifacts, read and compiled ahead of use: the Postgres WebAssembly module (9 MB, compiled on
 * V8's background threads) and its file-system bundle (6 MB). `prefetch()` starts both at the very beginning of a
 * process (apps/server-node/src/main.ts), so they are ready while the process is still loading its modules, on the
 * machine's other core; `PgDatabase.layerPglite` hands them to `PGlite.create`. Nothing here opens a data directory,
 * and this module imports nothing heavy, so prefetching costs no load time.
 */
import type { PGliteOptions } from "@electric-sql/pglite"
import { readFile } from "node:fs/promises"

type WasmModule = NonNullable<PGliteOptions["pgliteWasmModule"]>

// The compiler's libraries here (ES2024, no DOM) do not describe WebAssembly: only what this module uses.
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> }

export interface Artifacts {
  readonly pgliteWasmModule: WasmModule
  readonly fsBundle: Blob
}

const dist = (file: string) => new URL(file, import.meta.resolve("@electric-sql/pglite"))

let started: Promise<Artifacts | undefined> | undefined

/**
 * The artifacts, started once per process. `undefined` when they could not be read here: PGlite then reads them
 * itself, as it would have without the prefetch, and reports what is wrong.
 */
export const prefetch = (): Promise<Artifacts | undefined> =>
  (started ??= Promise.all([
    readFile(dist("./pglite.wasm")).then((bytes) => WebAssembly.compile(bytes)),
    readFile(dist("./pglite.data")).then(bundle)
  ]).then(([pgliteWasmModule, fsBundle]) => ({ pgliteWasmModule, fsBundle }), () => undefined))

/**
 * The file-system bundle as PGlite reads it: it calls only its `arrayBuffer()` (once per database opened). A `Blob`
 * of the file's bytes copies them in, then hands them back in chunks, copied again into one buffer: ~50–100 ms of the
 * main thread's CPU per start, for 6 MB. This gives each call its own copy (PGlite's in-memory file system keeps
 * views of it), made in one go.
 */
const bundle = (bytes: Uint8Array): Blob => {
  const arrayBuffer = () => Promise.resolve(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
  return { arrayBuffer } as Pick<Blob, "arrayBuffer"> as Blob
}
