/** Test kits for adapters of the AgentEngine port: `@cairn/agent-engine/testing`. */
export * from "./AgentEngineContract.ts"
/** Sections of the contract, for adapters' tests that run one on its own. */
export type { SectionContext } from "./ContractSection.ts"
export { configContract } from "./ConfigContract.ts"
export { filesContract } from "./FilesContract.ts"
export { consoleContract } from "./ConsoleContract.ts"
export { tasksContract } from "./TasksContract.ts"
export { snapshotsContract } from "./SnapshotsContract.ts"
export { appsContract, type AppsContractOptions } from "./AppsContract.ts"
export { channelsContract, fakeChannelTokens } from "./ChannelsContract.ts"
export { provisioningContract } from "./ProvisioningContract.ts"
export { loggedBy, withLogs } from "./LoggedBy.ts"
export * as FakeModelServer from "./FakeModelServer.ts"
