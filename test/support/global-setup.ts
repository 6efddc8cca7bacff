// Filled in with the per-run database once the migration applier exists.
export default async function setup() {
  return async () => {};
}
