/** @module The transform worker's entry when the plugin runs from its TypeScript sources: transform-worker.ts loaded with jiti. */
// Plain Node 20 cannot import a .ts file, and jiti's ESM loader hook (`--import jiti/register`) hands piscina a
// module whose default export is the exports object, not the handler. A built plugin never uses this file: its
// runner points piscina at the compiled transform-worker.js.
import { createJiti } from "jiti";

const jiti = createJiti(import.meta.url);

export default await jiti.import("./transform-worker.ts", { default: true });
