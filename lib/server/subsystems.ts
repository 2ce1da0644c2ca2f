/**
 * Imports every subsystem that registers itself with the server (lifecycles and WebSocket
 * routes). server.ts imports this once; add a line here when adding a subsystem.
 */
export {};
import '../ws';
import '../monitor';
