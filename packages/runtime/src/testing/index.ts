/** Test kits for every package's HTTP tests: `@cairn/runtime/testing`. */
export * as TestRuntime from "./TestRuntime.ts"
export * as ResponseValidation from "./ResponseValidation.ts"
export * as TestLogs from "./TestLogs.ts"
export * as ApiKit from "./ApiKit.ts"
