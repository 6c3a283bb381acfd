#!/usr/bin/env node
// Entry point of the `stratus` command: runs src/cli.ts through tsx's loader.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli.ts');
