/**
 * The TRA thread's entry point (compliance/TraThread.ts): the worker thread `TraClient` starts with its first
 * submission and ends when it has been idle; read from the checkout by the sources and the bundle alike.
 */
import { serve, type ThreadPort } from "./compliance/TraThread.ts"

declare const self: ThreadPort

serve(self)
