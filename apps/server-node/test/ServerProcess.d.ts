/** Runs the real server entry point as a child process on a free loopback port, for end-to-end tests. */
import { type ChildProcess } from "node:child_process";
export declare const freePort: () => Promise<number>;
export interface ServerProcess {
    readonly url: string;
    readonly child: ChildProcess;
    readonly output: () => string;
    /** Resolves with the exit code. */
    readonly exited: Promise<number | null>;
}
/** Starts the server entry point; `runtime` is the executable that runs it (Node by default, or Bun). */
export declare const startServer: (env: Record<string, string | undefined>, runtime?: string) => Promise<ServerProcess>;
/** Waits until the server answers /healthz, or fails with its output. */
export declare const waitUntilServing: (server: ServerProcess, timeoutMillis?: number) => Promise<void>;
