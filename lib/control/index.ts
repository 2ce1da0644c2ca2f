/**
 * lib/control: the verbs users call on jobs — submit (submit.ts), re-run (rerun.ts), cancel
 * (cancel.ts), priority (priority.ts), delete (delete.ts). They decide with lib/jobs and write through lib/store; the monitor hears their
 * writes on the store's bus (no call into lib/monitor).
 */
export { buildSpec, defaultExecutorOrNone, localGpusOrNone, containersOn, launchOf, PendingQuotaError, PriorityCapError, checkPriorityCap, storedWarnings, SubmissionConflictError, UnknownUploadError, submitJobSpec, type BuiltSpec, type LaunchOverrides, type SpecSource, type SubmitInput, type SubmitOutcome, type SubmittedJob } from './submit';
export { JobNotFoundError, rerunJob, type RerunOverrides } from './rerun';
export { requestCancel, type CancelOutcome } from './cancel';
export { changePriority, type PriorityOutcome } from './priority';
export { deleteJobs, type DeleteOptions, type DeleteOutcome } from './delete';
export { readManifest, storeUpload, UploadError, uploadMaxBytes, UPLOAD_HASH, type UploadManifest } from '../uploads/upload';
export { assertMayChange, ForbiddenJobError, splitByOwnership } from './ownership';
export { cancelGroup, deleteGroup, ForbiddenGroupError, GroupLiveError, GroupNotFoundError, rerunFailedInGroup } from './groups';
export { prepareSubmit, checkPendingQuota, type PreparedSubmit } from './submit';
export { type ArrayInput } from './array';
export { createSchedule, deleteSchedule, ForbiddenScheduleError, ownedSchedule, ScheduleInputError, ScheduleNotFoundError, setSchedulePaused, updateSchedule, type ScheduleInput } from './schedules';
export { fireDueSchedules, fireSchedule, type FireContext, type FireResult } from './schedule-fire';
