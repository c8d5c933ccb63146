/** For end-to-end tests and benchmarks: the real server entry point and the admin CLI, run as child processes. */
export * from "./Cli.ts"
export * from "./ServerProcess.ts"
export * from "./Api.ts"
export * from "./Files.ts"
export * from "./Conformance.ts"
export * from "./Wait.ts"
export * from "./Cluster.ts"
export * from "./RealEngineServer.ts"
