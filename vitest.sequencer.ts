/**
 * The order test files start in: longest first within each group (`sequence.groupOrder`), across projects. A group
 * lasts until its last file ends, and its files share one worker per core, so a long file that starts late keeps one
 * core busy alone at the end. Vitest's own order runs project after project, each by its last durations, else by
 * file size: in a fresh clone (CI) `OpenClawAgentEngine.int`, the longest file by far, started third among the
 * real-gateway files, behind two larger ones.
 *
 * A file's expected time is its duration in Vitest's results cache (the last run that ran it; `.ci/run` keeps one
 * cache per pass between its runs), or else its entry in `expectedSeconds`, or else nothing: files without either
 * keep Vitest's order, after those with one.
 */
import type { TestSpecification } from "vitest/node"
import { BaseSequencer } from "vitest/node"

/**
 * The longest files of CI's runs (`.ci/run` prints them), for runs without a results cache. Rough figures suffice:
 * they only order the files.
 */
const expectedSeconds: Readonly<Record<string, number>> = {
  // Real gateways (CI's embedded pass).
  "packages/agent-engine-openclaw/test/OpenClawAgentEngine.int.test.ts": 450,
  "packages/agent-engine-openclaw/test/OpenClawAgentEngineWorkspace.int.test.ts": 400,
  "apps/server-node/test/OpenClawServer.int.test.ts": 300,
  // Without gateways (npm run test:int, load average 8-12).
  "apps/cli/test/Cli.test.ts": 100,
  "apps/server-node/test/FilesApi.test.ts": 80,
  "packages/event-store-pg/test/PgliteTemplate.test.ts": 70,
  "packages/agent-engine-openclaw/test/OpenClawAgentEngine.test.ts": 60,
  "apps/server-node/test/TemplatesServer.test.ts": 50
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const base = await super.sort(files)
    const position = new Map(base.map((spec, index) => [spec, index]))
    const expected = (spec: TestSpecification): number | undefined => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec)?.duration
      if (cached !== undefined) return cached
      const seconds = expectedSeconds[spec.moduleId.slice(this.ctx.config.root.length + 1)]
      return seconds === undefined ? undefined : seconds * 1000
    }
    return [...base].sort((a, b) => {
      const group = a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder
      if (group !== 0) return group
      const [ea, eb] = [expected(a), expected(b)]
      if (ea !== undefined && eb !== undefined && ea !== eb) return eb - ea
      if (ea !== undefined && eb === undefined) return -1
      if (ea === undefined && eb !== undefined) return 1
      return position.get(a)! - position.get(b)!
    })
  }
}
