// Preloaded into every gateway Cairn starts (`node --import`). Cairn holds the write end of the gateway's stdin, so
// when Cairn dies, however it dies (SIGKILL included), the pipe closes and this stops the gateway's whole process
// group: SIGTERM, then SIGKILL after the grace period. No orphaned gateway keeps its ports and memory.
const graceMs = Number(process.env.CAIRN_GATEWAY_STOP_GRACE_MS ?? "15000")

const signalGroup = (signal) => {
  try {
    process.kill(-process.pid, signal)
  } catch {
    // Not a group leader (a relaunched child): the leader watches the same pipe and signals the group.
    process.kill(process.pid, signal)
  }
}

let stopping = false
const stop = () => {
  if (stopping) return
  stopping = true
  signalGroup("SIGTERM")
  // Unreferenced: it fires only if the gateway is still shutting down when the grace period is over.
  setTimeout(() => signalGroup("SIGKILL"), graceMs).unref()
}

process.stdin.on("data", () => {})
process.stdin.on("end", stop)
process.stdin.on("error", stop)
// The pipe must not keep a gateway alive that wants to exit.
process.stdin.unref?.()
