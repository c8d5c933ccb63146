/** The AgentEngine contract for tasks operations (see ContractSection.ts). */
import type { SectionContext } from "./ContractSection.ts"

export const tasksContract = <R>(_context: SectionContext<R>): void => {}
