/**
 * Every API area, in registration and seed order (parents before children).
 */
import type { ServiceModule } from '../context.ts';
import { armModule } from './arm/index.ts';
import { computeModule } from './compute/index.ts';

/** The modules `buildApp` registers. */
export const modules: ServiceModule[] = [armModule, computeModule];
