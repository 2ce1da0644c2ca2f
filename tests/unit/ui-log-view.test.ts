import { describe, expect, it } from 'vitest';
import { LogBuffer } from '../../lib/ui/log-buffer';
import { attemptNear, foldsHiding, LogView, sectionKey, type ViewItem, type ViewOptions } from '../../lib/ui/log-view';

/** A two-task pipeline's story: task 0 fails once and is restarted, task 1 runs once, the job ends. */
function pipeline(): LogBuffer {
  const b = new LogBuffer();
  b.addBanner({ key: 'start:0:1', tone: 'info', text: 'Task 0, attempt 1 started', task: 0, attempt: 1 });
  b.appendText(0, 1, 'a1\na2\n');
  b.addBanner({ key: 'end:0:1', tone: 'error', text: 'Task 0, attempt 1 failed', task: 0, attempt: 1 });
  b.addBanner({ key: 'start:0:2', tone: 'warning', text: 'Restart 1 of 1 — Task 0, attempt 2 started', task: 0, attempt: 2 });
  b.appendText(0, 2, 'b1\n');
  b.addBanner({ key: 'end:0:2', tone: 'success', text: 'Task 0, attempt 2 succeeded', task: 0, attempt: 2 });
  b.addBanner({ key: 'start:1:1', tone: 'info', text: 'Next task: Task 1, attempt 1 started', task: 1, attempt: 1 });
  b.appendText(1, 1, 'c1\nc2\nc3\n');
  b.addBanner({ key: 'job-end', tone: 'success', text: 'Job ended: SUCCEEDED', task: null, attempt: null });
  return b;
}

const all = (over: Partial<ViewOptions> = {}): ViewOptions => ({ taskSections: true, folded: new Set(), only: null, ...over });

/** The items as short strings: `T0` task header, `A0.2(n)` attempt header with its line count, row texts. */
function show(b: LogBuffer, items: ViewItem[]): string[] {
  return items.map((it) => (typeof it === 'number' ? b.rows[it].text : it.kind === 'task' ? `T${it.task}(${it.lines})` : `A${it.task}.${it.attempt}(${it.lines})`));
}

describe('LogView', () => {
  it('a pipeline: a section per task, in it one per attempt headed by its start banner', () => {
    const b = pipeline();
    const v = new LogView();
    v.update(b, all());
    expect(show(b, v.items)).toEqual(['T0(3)', 'A0.1(2)', 'a1', 'a2', 'Task 0, attempt 1 failed', 'A0.2(1)', 'b1', 'Task 0, attempt 2 succeeded', 'T1(3)', 'A1.1(3)', 'c1', 'c2', 'c3', 'Job ended: SUCCEEDED']);
    // The attempt header is the start banner's row.
    const header = v.items[1] as Exclude<ViewItem, number>;
    expect(b.rows[header.row].text).toBe('Task 0, attempt 1 started');
  });

  it('a one-task job has no task header: its items are its rows, one for one', () => {
    const b = new LogBuffer();
    b.addBanner({ key: 'start:0:1', tone: 'info', text: 'Attempt 1 started', task: 0, attempt: 1 });
    b.appendText(0, 1, 'x\ny\n');
    const v = new LogView();
    v.update(b, all({ taskSections: false }));
    expect(v.items.length).toBe(b.rows.length);
    expect(show(b, v.items)).toEqual(['A0.1(2)', 'x', 'y']);
  });

  it('folding an attempt hides its rows but keeps its header; folding a task hides its attempts', () => {
    const b = pipeline();
    const v = new LogView();
    v.update(b, all({ folded: new Set([sectionKey(0, 1)]) }));
    expect(show(b, v.items).slice(0, 4)).toEqual(['T0(3)', 'A0.1(2)', 'A0.2(1)', 'b1']);
    v.update(b, all({ folded: new Set([sectionKey(0)]) }));
    expect(show(b, v.items)).toEqual(['T0(3)', 'T1(3)', 'A1.1(3)', 'c1', 'c2', 'c3', 'Job ended: SUCCEEDED']);
    expect(foldsHiding(b.rows, b.rows.findIndex((r) => r.text === 'a2'), new Set([sectionKey(0), 'attempt:9:9']))).toEqual(['task:0']);
  });

  it('narrowed to one attempt: only its rows, no job-level banners, no other section', () => {
    const b = pipeline();
    const v = new LogView();
    v.update(b, all({ only: { task: 0, attempt: 1 } }));
    expect(show(b, v.items)).toEqual(['A0.1(2)', 'a1', 'a2', 'Task 0, attempt 1 failed']);
    v.update(b, all({ only: { task: 1, attempt: 1 } }));
    expect(show(b, v.items)).toEqual(['A1.1(3)', 'c1', 'c2', 'c3']);
  });

  it('grows incrementally as rows arrive, counting lines into the open sections', () => {
    const b = new LogBuffer();
    const v = new LogView();
    b.addBanner({ key: 'start:0:1', tone: 'info', text: 'Task 0, attempt 1 started', task: 0, attempt: 1 });
    expect(v.update(b, all())).toBe(true);
    const items = v.items;
    b.appendText(0, 1, 'partial');
    v.update(b, all());
    b.appendText(0, 1, ' line\nnext\n');
    expect(v.update(b, all())).toBe(true);
    expect(v.items).toBe(items); // appended to, not rebuilt
    expect(show(b, v.items)).toEqual(['T0(2)', 'A0.1(2)', 'partial line', 'next']);
    expect(v.update(b, all())).toBe(false);
  });

  it('maps rows to items and items to attempts', () => {
    const b = pipeline();
    const v = new LogView();
    v.update(b, all());
    const b1 = b.rows.findIndex((r) => r.text === 'b1');
    expect(show(b, [v.items[v.indexOfRow(b1)]])).toEqual(['b1']);
    expect(v.indexOfRow(b.rows.findIndex((r) => r.text === 'Task 0, attempt 1 started'))).toBe(1);
    expect(v.attemptAt(b.rows, 0)).toEqual({ task: 0, attempt: 2 }); // a task header: its latest attempt
    expect(v.attemptAt(b.rows, v.indexOfRow(b1))).toEqual({ task: 0, attempt: 2 });
    expect(v.attemptAt(b.rows, v.items.length - 1)).toBeNull(); // the job's end
    expect(attemptNear(v, b.rows, v.items.length - 1)).toEqual({ task: 1, attempt: 1 });
    v.update(b, all({ folded: new Set([sectionKey(0, 1)]) }));
    expect(v.indexOfRow(b.rows.findIndex((r) => r.text === 'a1'))).toBe(-1);
  });

  it('rows dropped from the buffer front (its cap) rebuild the view', () => {
    const b = new LogBuffer({ maxRows: 20 });
    const v = new LogView();
    b.addBanner({ key: 'start:0:1', tone: 'info', text: 'Attempt 1 started', task: 0, attempt: 1 });
    v.update(b, all({ taskSections: false }));
    for (let i = 0; i < 30; i++) b.appendText(0, 1, `l${i}\n`);
    v.update(b, all({ taskSections: false }));
    expect(b.dropped).toBeGreaterThan(0);
    const shown = show(b, v.items);
    expect(shown[0]).toMatch(/earlier rows are not shown/);
    expect(shown[1]).toMatch(/^A0\.1\(\d+\)$/); // a drawn header: the start banner is gone
    expect(shown.at(-1)).toBe('l29');
  });
});
