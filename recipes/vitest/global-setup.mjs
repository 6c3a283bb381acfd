import { start } from 'stratus-cloud';

/** Starts one Stratus and hands what the tests need to them (`inject('stratus')`). */
export default async function setup(project) {
  const stratus = await start();
  project.provide('stratus', {
    origin: stratus.origin,
    httpOrigin: stratus.httpOrigin,
    controlKey: stratus.controlKey,
    identities: stratus.identities,
  });
  return () => stratus.stop();
}
