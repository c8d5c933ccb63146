/**
 * What `replay` prints of a check (ProjectionCheck): one line per read model, and under one that differs, each
 * table's counts with a few of its differing rows, then a summary line.
 */
import type { ProjectionCheck } from "@cairn/event-store-pg"

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

export const lines = (checked: ReadonlyArray<ProjectionCheck.ProjectionComparison>): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const read of checked) {
    const lag = read.behind > 0 ? `, as of its checkpoint: ${plural(read.behind, "event")} behind the log` : ""
    const what = `${plural(read.tables.length, "table")}, ${plural(read.events, "event")}${lag}`
    if (read.equal) {
      out.push(`${read.projection}: equal (${what})`)
      continue
    }
    out.push(`${read.projection}: DIFFERS (${what})`)
    for (const table of read.tables) {
      if (table.liveSchema === null && table.onlyRebuilt > 0) out.push(`  ${table.table}: the live table is missing`)
      if (table.missingColumns.length > 0) out.push(`  ${table.table}: the live table lacks column(s) ${table.missingColumns.join(", ")}`)
      if (table.onlyLive === 0 && table.onlyRebuilt === 0) continue
      out.push(`  ${table.table}: ${plural(table.onlyLive, "row")} only in the live table, ${plural(table.onlyRebuilt, "row")} only in the rebuild`)
      for (const row of table.samples.onlyLive) out.push(`    live:    ${JSON.stringify(row)}`)
      for (const row of table.samples.onlyRebuilt) out.push(`    rebuilt: ${JSON.stringify(row)}`)
    }
  }
  const differing = checked.filter((c) => !c.equal).length
  const events = Math.max(0, ...checked.map((c) => c.events))
  out.push(
    differing === 0
      ? `${plural(checked.length, "read model")} rebuilt from ${plural(events, "event")} into a fresh schema: all equal to the live ones`
      : `${plural(checked.length, "read model")} rebuilt from ${plural(events, "event")} into a fresh schema: ${differing} differ`
  )
  return out
}
