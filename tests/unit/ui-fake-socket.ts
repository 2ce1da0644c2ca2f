import { encodeLogChunk } from '../../lib/logs/protocol';
import type { StreamMessage } from '../../lib/api/types';
import type { SocketLike } from '../../lib/ui/socket';

/**
 * A WebSocket stand-in for the dashboard's socket tests: records every instance (`all`) and lets
 * a test play the server — open, send text/JSON/log frames, drop with a close code. Not a mock of
 * jobdeck code: it replaces the browser's WebSocket only.
 */
export class FakeSocket implements SocketLike {
  static all: FakeSocket[] = [];
  binaryType = 'blob';
  readyState = 0;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  closed = false;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  message(data: unknown) {
    this.onmessage?.({ data });
  }
  json(m: StreamMessage) {
    this.message(JSON.stringify(m));
  }
  /** A binary log frame with `text` as bytes [offset, …) of (task, attempt). */
  bytes(task: number, attempt: number, offset: number, text: string) {
    const f = encodeLogChunk({ task, attempt, offset, data: new TextEncoder().encode(text) });
    this.message(f.buffer.slice(f.byteOffset, f.byteOffset + f.byteLength));
  }
  drop(code = 1006, reason = '') {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
  close() {
    this.closed = true;
  }
}
