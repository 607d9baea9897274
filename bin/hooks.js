#!/usr/bin/env node
// Entry point of the `hooks` CLI: runs the compiled CLI from dist/ (built by `npm install` through `prepare`).
import { main } from "../dist/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
