import { start } from 'stratus-cloud';

/** Starts one Stratus; the workers (started after this) inherit its settings through the environment. */
export default async function globalSetup() {
  const stratus = await start();
  globalThis.__stratus = stratus; // for the teardown, which runs in this process
  process.env.STRATUS_URL = stratus.origin;
  process.env.STRATUS_HTTP_URL = stratus.httpOrigin;
  process.env.STRATUS_CONTROL_KEY = stratus.controlKey;
  process.env.STRATUS_IDENTITIES = JSON.stringify(stratus.identities);
}
