/**
 * Worker Versioning (Temporal worker deployments): with BACKFILL_BUILD_ID set, a worker joins the
 * deployment BACKFILL_DEPLOYMENT_NAME as that build. Runs are pinned by default: a run, its
 * partition children and its continue-as-new generations finish on the build they started on,
 * and new runs go to the deployment's current build (`temporal worker deployment
 * set-current-version`). A backfill changes production rows and must be provable afterwards:
 * one run, one build, with no mid-run switch of the code that computes its values. Keep the
 * old build's workers until its runs end (status and the chunk log say which build runs what).
 * BACKFILL_VERSIONING_BEHAVIOR=auto-upgrade moves running runs to the current build at their next
 * workflow task instead, which is safe only for changes behind `patched()`.
 */
import type { WorkerDeploymentOptions } from '@temporalio/worker';

export interface WorkerDeployment {
  name: string;
  buildId: string;
  behavior: 'PINNED' | 'AUTO_UPGRADE';
}

/** The deployment options Worker.create takes, or nothing for an unversioned worker. */
export function deploymentOptions(deployment: WorkerDeployment | undefined): { workerDeploymentOptions?: WorkerDeploymentOptions } {
  if (!deployment) return {};
  return {
    workerDeploymentOptions: {
      useWorkerVersioning: true,
      version: { deploymentName: deployment.name, buildId: deployment.buildId },
      defaultVersioningBehavior: deployment.behavior,
    },
  };
}

/** From BACKFILL_BUILD_ID, BACKFILL_DEPLOYMENT_NAME and BACKFILL_VERSIONING_BEHAVIOR (already checked by envSettings). */
export function deploymentFromSettings(settings: {
  BACKFILL_BUILD_ID?: string;
  BACKFILL_DEPLOYMENT_NAME: string;
  BACKFILL_VERSIONING_BEHAVIOR: 'pinned' | 'auto-upgrade';
}): WorkerDeployment | undefined {
  if (!settings.BACKFILL_BUILD_ID) return undefined;
  return {
    name: settings.BACKFILL_DEPLOYMENT_NAME,
    buildId: settings.BACKFILL_BUILD_ID,
    behavior: settings.BACKFILL_VERSIONING_BEHAVIOR === 'auto-upgrade' ? 'AUTO_UPGRADE' : 'PINNED',
  };
}
