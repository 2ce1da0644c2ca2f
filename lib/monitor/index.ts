/**
 * The monitor: createMonitor() makes one over a database and the executors; the server creates
 * it at start (lib/server/start.ts), runs its start-up recovery before accepting requests, keeps
 * it in its services for GET /api/monitor, and stops it on SIGTERM without touching running
 * attempts (the next start re-adopts them).
 */
export { processMemory, type LiveServers, type MonitorHandle, type MonitorState, type ProcessMemory } from './state';
export { createMonitor, type Clock, type Monitor, type MonitorHooks, type MonitorOptions, type StepPhase, type WriteContext } from './monitor';
export { isTransientDbError, TransientDatabaseError } from './errors';
export { leaseMsFromEnv, monitorSettingsFromEnv, type MonitorSettings } from './config';
export { hostIdentity, newServerId } from './lease';
