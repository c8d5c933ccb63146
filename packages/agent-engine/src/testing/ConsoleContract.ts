/** The AgentEngine contract for console operations (see ContractSection.ts). */
import type { SectionContext } from "./ContractSection.ts"

export const consoleContract = <R>(_context: SectionContext<R>): void => {}
