import { z } from 'zod';

/**
 * `image_id: docker:IMAGE` (docs/spec.md "image_id"): the texts and the form of a task's
 * container image, shared by the schema and the submit-time rule (lib/jobs/spec/task-checks.ts). Pure.
 */

/** The refusal of a container image (`image_id: docker:…`) where the server has no container runtime (JOBDECK_CONTAINER_RUNTIME off). */
export const DOCKER_IMAGE_REFUSED =
  'image_id "docker:…" needs a container runtime, and none is configured for jobdeck (JOBDECK_CONTAINER_RUNTIME is off): the task would run on the host without the image; install what the task needs on the machine and remove image_id';

/** The refusal of a container image in an `any_of` / `ordered` alternative or a per-region map: one image, on the task. */
export const DOCKER_IMAGE_PLACE = 'image_id "docker:…" is taken as the task\'s own `resources.image_id: docker:IMAGE` (one image for the task): not per region, not per alternative';

/**
 * The image of `image_id: docker:IMAGE` (SkyPilot's form: `docker:` then the image as the runtime
 * names it), trimmed; null for any other value (a cloud image, a map, absent). The one reader of
 * the `docker:` prefix.
 */
export function dockerImageOf(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t.toLowerCase().startsWith('docker:') ? t.slice('docker:'.length).trim() : null;
}

/**
 * `image_id`: any SkyPilot form (a string, or a map region → image). `docker:IMAGE` needs an
 * image name; a docker image in a region map, or anywhere in an alternative (`inAlternative`), is
 * refused: jobdeck runs one image per task (whether the server can run it at all is a submit rule,
 * lib/jobs/spec/normalize.ts checkImages).
 */
export const imageIdSchema = (inAlternative: boolean) =>
  z.unknown().superRefine((v, ctx) => {
    const own = dockerImageOf(v);
    if (own !== null && !inAlternative) {
      if (own === '') ctx.addIssue({ code: 'custom', message: 'image_id "docker:" names no image: write docker:IMAGE (an image the container runtime has locally)', params: { full: true } });
      return;
    }
    const images = typeof v === 'string' ? [v] : v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.values(v) : [];
    if (images.some((i) => dockerImageOf(i) !== null)) ctx.addIssue({ code: 'custom', message: DOCKER_IMAGE_PLACE, params: { full: true } });
  });
