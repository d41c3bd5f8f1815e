#!/usr/bin/env node
// Run through npm (`npx codehost`, npm scripts), `node` is the project's pinned Node 24.
import { run } from '../src/main.ts';

run(process.argv.slice(2));
