/** Test kits for every package's HTTP tests: `@cairn/runtime/testing`. */
export * as TestRuntime from "./TestRuntime.ts"
