import { capabilitiesOf, DEFAULT_EXECUTOR, kindsWith, type ExecutorKind } from '../executor-kinds';
import { DOCKER_IMAGE_REFUSED, dockerImageOf } from './images';
import { formatPath, issueAt, type SpecIssue } from './messages';
import { FILE_MOUNT_ABSOLUTE_REFUSED, FILE_MOUNT_NOT_UPLOADED } from './mounts';
import type { RawDoc } from './positions';
import type { SpecUploads } from './schema';

/**
 * Submit-time rules of a pipeline's tasks that need the server's facts — its uploads, its
 * container runtime (docs/spec.md "file_mounts", "image_id"). Pure; lib/jobs/spec/normalize.ts
 * runs them.
 */

/** What these rules read of a task draft. */
export interface TaskDraft {
  label: string;
  doc: RawDoc;
  fileMounts?: Record<string, string>;
  resources: { other: Record<string, unknown> };
}

/**
 * `file_mounts` (docs/spec.md "file_mounts"): every local source's content must come with the
 * job (the launching machine's paths mean nothing here); an absolute target only under the
 * operator's JOBDECK_FILE_MOUNT_ROOT, so a job cannot write anywhere the server's user can.
 */
export function checkFileMounts(drafts: readonly TaskDraft[], uploads: SpecUploads, file: string, issues: SpecIssue[]): void {
  const uploaded = new Set(uploads.fileMountTargets ?? []);
  const root = uploads.fileMountRoot ? uploads.fileMountRoot.replace(/\/+$/, '') : null;
  for (const d of drafts) {
    for (const target of Object.keys(d.fileMounts ?? {})) {
      const at = d.doc.locate(['file_mounts', target], 'key');
      const label = formatPath(d.label, ['file_mounts', target]);
      if (target.startsWith('/') && (root === null || (target !== root && !target.startsWith(`${root}/`)))) {
        issues.push(issueAt(file, at, label, root === null ? FILE_MOUNT_ABSOLUTE_REFUSED : `${FILE_MOUNT_ABSOLUTE_REFUSED} (allowed here: under ${root})`));
      } else if (!uploaded.has(target)) {
        issues.push(issueAt(file, at, label, FILE_MOUNT_NOT_UPLOADED));
      }
    }
  }
}

/**
 * `image_id: docker:IMAGE` (docs/spec.md "image_id"): runs in a container on an executor that can
 * (lib/jobs/executor-kinds.ts `containers`) of a server with a container runtime; refused
 * otherwise, at the key — never a silent run on the host without the image.
 */
export function checkImages(drafts: readonly TaskDraft[], executor: ExecutorKind | null, containers: boolean, file: string, issues: SpecIssue[]): void {
  const can = capabilitiesOf(executor ?? DEFAULT_EXECUTOR);
  for (const d of drafts) {
    if (!dockerImageOf(d.resources.other.image_id)) continue;
    const message = !can?.containers
      ? `image_id "docker:…": the ${can?.label ?? executor} executor runs no containers (no container runtime on its nodes is configured for jobdeck); use infra: ${kindsWith((c) => c.containers).join(' or ')}, or install what the task needs there and remove image_id`
      : containers
        ? null
        : DOCKER_IMAGE_REFUSED;
    if (message) issues.push(issueAt(file, d.doc.locate(['resources', 'image_id'], 'value'), formatPath(d.label, ['resources', 'image_id']), message));
  }
}
