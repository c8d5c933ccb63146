/**
 * @helia/unixfs and the UnixFS importer and exporter, loaded on first use: together about 430 modules that a server
 * start would otherwise load before it answers (docs/performance.md, "bench:startup"), for content no request has
 * asked for yet. Loaded once; every later use gets the same modules.
 */
export interface UnixfsModules {
  readonly unixfs: typeof import("@helia/unixfs").unixfs
  readonly importer: typeof import("ipfs-unixfs-importer").importer
  readonly importFile: typeof import("ipfs-unixfs-importer").importFile
  readonly fixedSize: typeof import("ipfs-unixfs-importer/chunker").fixedSize
  readonly balanced: typeof import("ipfs-unixfs-importer/layout").balanced
  readonly exporter: typeof import("ipfs-unixfs-exporter").exporter
  /** How the exporter walks a path, one step per codec: dag-pb's finds a name in a directory or a HAMT shard. */
  readonly resolvers: typeof import("ipfs-unixfs-exporter").resolvers
  /** What a resolver throws for a name that is not there (a missing block is the blockstore's own error). */
  readonly NoSuchName: typeof import("ipfs-unixfs-exporter").NotFoundError
}

const load = async (): Promise<UnixfsModules> => {
  const [helia, importer, chunker, layout, exporter] = await Promise.all([
    import("@helia/unixfs"),
    import("ipfs-unixfs-importer"),
    import("ipfs-unixfs-importer/chunker"),
    import("ipfs-unixfs-importer/layout"),
    import("ipfs-unixfs-exporter")
  ])
  return {
    unixfs: helia.unixfs,
    importer: importer.importer,
    importFile: importer.importFile,
    fixedSize: chunker.fixedSize,
    balanced: layout.balanced,
    exporter: exporter.exporter,
    resolvers: exporter.resolvers,
    NoSuchName: exporter.NotFoundError
  }
}

let loading: Promise<UnixfsModules> | undefined

/** The modules, loading them the first time. A failed load is tried again next time. */
export const unixfsModules = (): Promise<UnixfsModules> => {
  loading ??= load().catch((cause: unknown) => {
    loading = undefined
    throw cause
  })
  return loading
}
