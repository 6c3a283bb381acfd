/**
 * Errors: the envelopes of every API family (`envelope.ts`), the catalogue machinery
 * (`catalogue.ts`) and one catalogue per family. Handlers raise `errors.<family>.<name>(…)`;
 * no error code is written outside this folder.
 */
export * from './envelope.ts';
export { defineErrors, fillTemplate, registry, type Catalogue, type ErrorEntry, type Raise } from './catalogue.ts';
export { bearerChallenge, withStatus } from './common.ts';
export { invalidInputDetail } from './platform.ts';
export { armBearerChallenge } from './arm.ts';
import { defineErrors } from './catalogue.ts';
import { mergeCatalogues, sharedEntries } from './common.ts';
import { analytics } from './analytics.ts';
import { arm } from './arm.ts';
import { control } from './control.ts';
import { datashare } from './datashare.ts';
import { directory } from './directory.ts';
import { mail } from './mail.ts';
import { oauth } from './oauth.ts';
import { platform } from './platform.ts';
import { wopi } from './wopi.ts';

/**
 * Every family's catalogue, keyed by family (`errors[family].invalidBody({ message })`). The
 * families whose file does not declare the shared entries (`common.ts`) get them here.
 */
export const errors = {
  oauth,
  arm: mergeCatalogues(arm, defineErrors('arm', sharedEntries('arm'))),
  datashare: mergeCatalogues(datashare, defineErrors('datashare', sharedEntries('datashare'))),
  analytics,
  platform,
  mail: mergeCatalogues(mail, defineErrors('mail', sharedEntries('mail'))),
  /** The directory API's errors, rendered in the mail envelope (`directory.ts`). */
  directory,
  wopi,
  control,
} as const;
