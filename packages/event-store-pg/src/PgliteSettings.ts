/**
 * How the embedded database's Postgres is started. PGlite starts it with 128 MB of shared buffers, and setting up
 * that much memory is a fifth of opening a database (~60 ms of a warm start's ~310 ms in `PGlite.create`, and ~90 MB
 * of resident memory; docs/performance.md, "Start"). An embedded store's working set is small, and the operating
 * system's page cache holds what the buffers do not, so Cairn starts it with 32 MB unless `PGLITE_SHARED_BUFFERS`
 * says otherwise (a Postgres size: `128MB`, `1GB`).
 */

/** The value Cairn gives Postgres's `shared_buffers`. */
export const sharedBuffers = (): string => {
  const value = process.env["PGLITE_SHARED_BUFFERS"] ?? "32MB"
  if (!/^[1-9][0-9]*(kB|MB|GB)$/.test(value)) {
    throw new Error(`PGLITE_SHARED_BUFFERS must be a size such as 32MB or 1GB, not "${value}"`)
  }
  return value
}

/** PGlite's own start parameters (`PGlite.defaultStartParams`) with Cairn's settings after them. */
export const startParams = (defaults: ReadonlyArray<string>): Array<string> => [
  ...defaults,
  "-c",
  `shared_buffers=${sharedBuffers()}`
]
