/**
 * @jobdeck/client — submit, watch and tail jobdeck jobs from TypeScript (docs/client-typescript.md).
 *
 *     import { JobdeckClient } from '@jobdeck/client';
 *     const client = new JobdeckClient();              // JOBDECK_URL / JOBDECK_TOKEN, or the local server
 *     const { id } = await client.submit({ cmd: 'python train.py' }, { name: 'train' });
 *     for await (const item of client.tail(id)) if (item.kind === 'log') process.stdout.write(item.data);
 *     console.log(await client.wait(id));              // 'SUCCEEDED'
 */
export * from './api.gen';
export { BACKOFF_FIRST_MS, BACKOFF_MAX_MS, backoffDelay } from './backoff';
export { JobdeckClient, type ClientOptions, type JobSource, type ListFilter, type ListParams, type QueueSettings, type RerunChanges, type SubmitOptions, type TailOptions } from './client';
export { displayPath, localTokenPath, readLocalToken, resolveTokenSource, resolveTokenSync, resolveUrl, tokenRefusedHint, type Env, type TokenSource } from './config';
export { LogCursor, type CursorOptions, type TailItem } from './cursor';
export * from './errors';
export { type RequestOptions, type HttpOptions } from './http';
export { DEFAULT_UPLOAD_MAX_BYTES, packFile, packFolder, uploadCap, type PackedFolder } from './pack';
export { CLOSE, decodeLogChunk, type LogChunk, type Position, type StreamMessage } from './protocol';
export { FOLDER_TASK_FILE, isRelativeWorkdir, localFileMounts, MAX_SPEC_BYTES, readSpecFile, relativeWorkdirFolder, resolveTaskFile } from './spec-files';
export * from './stream';
export { type LogTail } from './tail';
