/**
 * The CLI's default view of a multi-node attempt (docs/cli.md, "Multi-node tasks"): its ranks'
 * logs arrive interleaved, each in order; this turns them into whole lines, each prefixed with
 * its rank (`[rank 1] …`), so lines of different nodes never mix within one line. A rank's
 * unfinished last line waits for its newline, or for the attempt's end. Pure; bytes in, bytes out.
 */

const NL = 0x0a;

/** Lines of one multi-node attempt's ranks, prefixed (see the module comment). */
export class RankLines {
  private readonly partial = new Map<number, Uint8Array[]>();
  private readonly prefixes = new Map<number, Uint8Array>();

  /** `label(rank)`: the text put before each line of that rank (e.g. a dim `[rank 1] `). */
  constructor(private readonly label: (rank: number) => string) {}

  private prefix(rank: number): Uint8Array {
    let p = this.prefixes.get(rank);
    if (!p) {
      p = new TextEncoder().encode(this.label(rank));
      this.prefixes.set(rank, p);
    }
    return p;
  }

  /** Takes `data` of `rank`'s log; answers its lines completed by it, each prefixed (may be empty). */
  write(rank: number, data: Uint8Array): Uint8Array {
    const out: Uint8Array[] = [];
    let start = 0;
    for (let i = data.indexOf(NL); i !== -1; i = data.indexOf(NL, start)) {
      out.push(this.prefix(rank), ...(this.partial.get(rank) ?? []), data.subarray(start, i + 1));
      this.partial.delete(rank);
      start = i + 1;
    }
    if (start < data.length) {
      const rest = this.partial.get(rank) ?? [];
      // A copy: the caller's buffer may be reused once this returns.
      rest.push(data.slice(start));
      this.partial.set(rank, rest);
    }
    return concat(out);
  }

  /** The attempt ended: every rank's unfinished line, prefixed and ended with a newline. */
  end(): Uint8Array {
    const out: Uint8Array[] = [];
    for (const rank of [...this.partial.keys()].sort((a, b) => a - b)) out.push(this.prefix(rank), ...this.partial.get(rank)!, new Uint8Array([NL]));
    this.partial.clear();
    return concat(out);
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
