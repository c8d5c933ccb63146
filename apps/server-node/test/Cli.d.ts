export declare const cli: (env: {
    readonly url: string;
    readonly dataDir: string;
}, ...args: Array<string>) => string;
export declare const cliResult: (env: {
    readonly url: string;
    readonly dataDir: string;
}, ...args: Array<string>) => import("child_process").SpawnSyncReturns<string>;
