import { MemoryEventStore } from "@cairn/event-store"
import { eventStoreContract } from "@cairn/event-store/testing"

eventStoreContract("MemoryEventStore", MemoryEventStore.layer())
