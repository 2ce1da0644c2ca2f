/**
 * The texts and limits of `file_mounts` (docs/spec.md "file_mounts"), shared by the schema and the
 * submit-time rules. Pure.
 */

/** Most `file_mounts` entries a task may have. */
export const MAX_FILE_MOUNTS = 64;

/** A bucket or cloud-storage source: a URL with a scheme (s3://, gs://, r2://, https://…). */
export const STORAGE_URL = /^[a-z][a-z0-9+.-]*:\/\//i;

/** An absolute `file_mounts` target outside the operator's root (docs/spec.md "file_mounts"). */
export const FILE_MOUNT_ABSOLUTE_REFUSED =
  'an absolute target is allowed only under the folder the operator allows (JOBDECK_FILE_MOUNT_ROOT); use a relative target (inside the attempt\'s working folder) or ~/…';

/** A `file_mounts` entry whose source content did not come with the job. */
export const FILE_MOUNT_NOT_UPLOADED =
  'a local source needs its content uploaded with the job: jobdeck launch does it, the API takes fileMountUploads';

