/** The AgentEngine contract for files operations (see ContractSection.ts). */
import type { SectionContext } from "./ContractSection.ts"

export const filesContract = <R>(_context: SectionContext<R>): void => {}
