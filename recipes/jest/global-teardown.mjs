export default async function globalTeardown() {
  await globalThis.__stratus?.stop();
}
