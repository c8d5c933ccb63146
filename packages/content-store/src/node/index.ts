/**
 * What uploads use on Node before a content store sees them: `LeafWriter` stages a large file part as raw leaves on
 * disk, each hashed and written by a worker thread (`LeafWorker`), and `bodyBytesRead` paces young-generation
 * collections by the body bytes read (`YoungGenerationGc`).
 */
export * from "./LeafWorker.ts"
export * from "./LeafWriter.ts"
export * from "./YoungGenerationGc.ts"
