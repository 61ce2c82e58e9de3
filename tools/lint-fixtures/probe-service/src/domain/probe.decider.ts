/**
 * The probe service's only real file: pure, as every domain file must be. The lint fixtures lint
 * other code *as if* it lived next to this file (see tools/lint-fixtures/README.md).
 */
export const nextVersion = (version: number): number => version + 1;
