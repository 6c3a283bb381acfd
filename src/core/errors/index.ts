/**
 * Errors: the envelopes of every API family (`envelope.ts`), the catalogue machinery
 * (`catalogue.ts`) and one catalogue per family. Handlers raise `errors.<family>.<name>(…)`;
 * no error code is written outside this folder.
 */
export * from './envelope.ts';
export { defineErrors, fillTemplate, registry, type Catalogue, type ErrorEntry, type Raise } from './catalogue.ts';
import { analytics } from './analytics.ts';
import { arm } from './arm.ts';
import { control } from './control.ts';
import { datashare } from './datashare.ts';
import { mail } from './mail.ts';
import { oauth } from './oauth.ts';
import { platform } from './platform.ts';
import { wopi } from './wopi.ts';

/** Every family's catalogue, keyed by family (`errors[family].invalidBody({ message })`). */
export const errors = { oauth, arm, datashare, analytics, platform, mail, wopi, control } as const;
