import { openAppend, layerTest, serverUrl } from "@cairn/event-store-pg/testing"
import { PgEventStore } from "@cairn/event-store-pg"
import { eventStoreContract } from "@cairn/event-store/testing"
import { Layer } from "effect"

const database = layerTest()
const store = PgEventStore.layer().pipe(Layer.provideMerge(database))

// PGlite serves a single session, so a second writer cannot hold a transaction open beside the first:
// the out-of-order commit race only exists on a Postgres server.
eventStoreContract(
  serverUrl() === undefined ? "PgEventStore on embedded PGlite" : "PgEventStore on PostgreSQL",
  store,
  serverUrl() === undefined ? {} : { openAppend }
)
