import { describe, expect, it } from 'vitest';
import { applyV8Flags, checkV8Flags, DEFAULT_V8_FLAGS, parseV8Flags } from '../../lib/server/v8-flags';

describe('JOBDECK_V8_FLAGS', () => {
  it('splits --flag and --flag=value items on any whitespace', () => {
    expect(parseV8Flags('  --heap-growing-percent=50\t--no-memory-reducer \n')).toEqual(['--heap-growing-percent=50', '--no-memory-reducer']);
    expect(parseV8Flags('')).toEqual([]);
  });

  it('refuses an item that is not a flag, naming the variable and the item', () => {
    expect(() => parseV8Flags('--heap-growing-percent=50 heap-growing-percent=30')).toThrow('JOBDECK_V8_FLAGS: expected --flag or --flag=value items separated by spaces, got "heap-growing-percent=30"');
    expect(() => parseV8Flags('--=1')).toThrow(/got "--=1"/);
  });

  it('refuses a flag node does not know, or a bad value, naming it (V8 alone would only print a warning)', () => {
    expect(() => applyV8Flags({ JOBDECK_V8_FLAGS: '--heap-growing-percent=50 --no-such-flag' })).toThrow(/JOBDECK_V8_FLAGS: node refuses "--no-such-flag" \(.*bad option/);
    expect(() => applyV8Flags({ JOBDECK_V8_FLAGS: '--heap-growing-percent=abc' })).toThrow(/node refuses "--heap-growing-percent=abc"/);
    expect(() => checkV8Flags(parseV8Flags(DEFAULT_V8_FLAGS))).not.toThrow();
  });

  it('applies the default when unset, nothing when set empty, and nothing at all when one item is bad', () => {
    expect(applyV8Flags({})).toEqual(parseV8Flags(DEFAULT_V8_FLAGS));
    expect(applyV8Flags({ JOBDECK_V8_FLAGS: '' })).toEqual([]);
    expect(() => applyV8Flags({ JOBDECK_V8_FLAGS: '--heap-growing-percent=50 oops' })).toThrow(/"oops"/);
  });
});
