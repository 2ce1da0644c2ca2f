import { describe, expect, it } from 'vitest';
import { literalOf, PREPARED_MAX, PreparedStatements } from '../../lib/store/prepared';

/** The literals of EXECUTE and the session's statement list (lib/store/prepared.ts). */
describe('prepared statements: literals', () => {
  it('quotes every scalar, doubling quotes only', () => {
    expect(literalOf(null)).toBe('NULL');
    expect(literalOf(42)).toBe("'42'");
    expect(literalOf(-0.5)).toBe("'-0.5'");
    expect(literalOf(1e300)).toBe("'1e+300'");
    expect(literalOf(true)).toBe("'true'");
    expect(literalOf(12n)).toBe("'12'");
    expect(literalOf("it's")).toBe("'it''s'");
    expect(literalOf('a\\b')).toBe("'a\\b'");
    expect(literalOf("''")).toBe("''''''");
  });

  it('refuses what is no plain scalar, or no valid text (the statement then runs unprepared)', () => {
    for (const v of [undefined, NaN, Infinity, [1], { a: 1 }, new Date(0), 'nul\0byte']) expect(literalOf(v)).toBeNull();
  });
});

describe('prepared statements: the list', () => {
  it('names each text once and evicts the least recently used past PREPARED_MAX', () => {
    const p = new PreparedStatements();
    const names: string[] = [];
    for (let k = 0; k < PREPARED_MAX; k++) {
      const added = p.add(`q${k}`);
      expect(added.evict).toBeNull();
      names.push(added.name);
    }
    expect(new Set(names).size).toBe(PREPARED_MAX);
    expect(p.size).toBe(PREPARED_MAX);
    // q0 used again: q1 is now the least recently used, and the one a new text evicts.
    expect(p.use('q0')).toBe(names[0]);
    const over = p.add('new');
    expect(over.evict).toBe(names[1]);
    expect(p.use('q1')).toBeUndefined();
    expect(p.size).toBe(PREPARED_MAX);
    p.forget('new');
    expect(p.use('new')).toBeUndefined();
  });
});
