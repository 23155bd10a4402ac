/** Starts the stand-in origin (Node) for the workerd edge tests and hands its URL to the pool. */
import type { TestProject } from 'vitest/node';
import { startStandInOrigin } from '../../support/stand-in-origin.js';
import { TEST_EDGE_SECRETS } from '../helpers/edge-test-secrets.js';

declare module 'vitest' {
  export interface ProvidedContext {
    standInOriginUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const origin = await startStandInOrigin({ secret: TEST_EDGE_SECRETS.EDGE_ORIGIN_SECRET });
  project.provide('standInOriginUrl', origin.url);
  return () => origin.stop();
}
