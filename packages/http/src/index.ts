/** Cairn's HTTP surface: routes and the layer that serves them all. */
export * as HealthRoutes from "./HealthRoutes.ts"
export * as CairnHttp from "./CairnHttp.ts"
