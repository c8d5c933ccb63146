/** The AgentEngine contract for config operations (see ContractSection.ts). */
import type { SectionContext } from "./ContractSection.ts"

export const configContract = <R>(_context: SectionContext<R>): void => {}
