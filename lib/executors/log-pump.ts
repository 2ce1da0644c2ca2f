/**
 * The log pump: the small process between an attempt's output and its log file
 * (docs/design.md §8 "A full disk and the log"). The wrapper sends the task's stdout and stderr
 * into ONE pipe (`2>&1` onto the same pipe: one writer order, nothing to reorder); the pump
 * appends what it reads to the log, and where the log cannot take bytes (ENOSPC, EDQUOT, any
 * write error) it counts them, keeps reading (the task never blocks on it, never gets SIGPIPE),
 * and writes a marker line before the next bytes that do fit — or at the end:
 * `[jobdeck] N bytes of output lost here: the disk was full (ENOSPC)`. The running total is kept
 * in `<exit record name>.lost` beside the exit record, a fixed-width number overwritten in place
 * (its space taken by the wrapper before the task starts, so a full disk cannot refuse it
 * later), which the wrapper copies into its exit record as `logLostBytes`.
 *
 * Perl, because it is Essential on Debian (on every node) and costs ~0.5 MB; no modules (errno
 * values are Linux's: ENOSPC 28, EDQUOT 122, EINTR 4). Started with an empty environment
 * (bash's `exec -c`) so the task's PERL5OPT / PERL5LIB cannot reach it. Signals: TERM / INT / HUP / PIPE ignored (a cancel
 * signals the whole process group; the pump drains until every writer is gone). USR1 from the
 * wrapper says "the phases ended": the pump then drains until end of input, at most
 * PUMP_DRAIN_SECONDS — a process the task left behind may hold the pipe — and past that forks: the
 * parent exits (the wrapper writes its record) and the child goes on appending until the last
 * writer closes, so a leftover is never cut off.
 */

/** How long the pump waits, after the phases ended, for the last writer before it lets the wrapper finish. */
export const PUMP_DRAIN_SECONDS = 2;

/** Suffix of the pump's lost-bytes file, after the exit record's name (`exit.lost`). */
export const LOST_SUFFIX = '.lost';

/** Reads at most this many bytes per read: one pipe's worth and then some. */
const CHUNK = 65536;

// Perl text: no single quote (it sits in a single-quoted shell word) and no dollar-brace (a
// template literal). $ARGV[0]: the lost-bytes file.
const PUMP_PERL = [
  '$SIG{TERM} = $SIG{INT} = $SIG{HUP} = $SIG{PIPE} = "IGNORE";',
  'my ($done, $end, $pend, $total, $tail, $held, $last, $why, $C) = (0, 0, 0, 0, "", 0, "\\n", "", undef);',
  '$SIG{USR1} = sub { $done = 1 if !$done };',
  // A USR1 sent before the line above was ignored (the wrapper starts the pump ignoring it): the
  // wrapper let go of the pipe before sending it, so its stdout no longer being the pipe says the same.
  'my ($mine, $its) = (readlink("/proc/self/fd/0"), readlink("/proc/" . getppid() . "/fd/1"));',
  '$done = 1 if defined $mine && defined $its && $mine ne $its;',
  'open($C, "+<", $ARGV[0]) or undef $C;',
  'sub count { if ($C) { sysseek($C, 0, 0); syswrite($C, sprintf("%-20d\\n", $total)) } }',
  // Writes all of $s or stops at the first error (its reason kept): the bytes written.
  'sub put { my $s = shift; my $o = 0; while ($o < length $s) { my $n = syswrite(STDOUT, $s, length($s) - $o, $o);',
  '  if (defined $n) { $o += $n; next } next if $! == 4;',
  '  $why = $! == 28 ? "the disk was full (ENOSPC)" : $! == 122 ? "the disk quota was exceeded (EDQUOT)" : "the log could not be written ($!)"; last } $o }',
  // The marker for what was lost since the last one, on a line of its own; true once all of it is
  // written. A marker none of which could be written is made again next time, with the bytes lost
  // meanwhile ($held: the count the unwritten marker holds).
  'sub mark { if ($tail eq "" && $pend) { $tail = ($last eq "\\n" ? "" : "\\n") . "[jobdeck] $pend bytes of output lost here: $why\\n"; $held = $pend }',
  '  return 1 if $tail eq ""; my $k = put($tail); if (!$k && $held) { $tail = ""; return 0 }',
  '  $pend -= $held; $held = 0; $last = substr($tail, $k - 1, 1) if $k; substr($tail, 0, $k, ""); $tail eq "" }',
  'sub lose { my $n = shift; if ($n) { $pend += $n; $total += $n; count() } }',
  'sub take { my $s = shift; if (mark()) { my $k = put($s); $last = substr($s, $k - 1, 1) if $k; lose(length($s) - $k) } else { lose(length $s) } }',
  'my ($buf, $rin) = ("", "");',
  'vec($rin, 0, 1) = 1;',
  'for (;;) {',
  `  $end = time + ${PUMP_DRAIN_SECONDS} if $done == 1 && !$end;`,
  '  if ($end && time >= $end) { mark(); my $p = fork; exit 0 if $p; $done = 2; $end = 0 }',
  // select, not a bare read: a signal interrupts it whatever the restart flag; 5 s covers a USR1
  // that lands between the check above and the select.
  '  my $nf = select(my $r = $rin, undef, undef, $end ? $end - time : 5);',
  '  next if $nf <= 0;',
  `  my $n = sysread(STDIN, $buf, ${CHUNK});`,
  '  if (!defined $n) { next if $! == 4; last }',
  '  last if !$n;',
  '  take($buf);',
  '}',
  'mark();',
].join('\n');

/**
 * The wrapper's pump block (bash; in WRAPPER right after the log is opened): starts the pump as a
 * process substitution — the wrapper's child, in its session and process group — and points the
 * wrapper's stdout and stderr, hence setup's and run's, at its one pipe. Sets __jobdeck_pump (its
 * pid; empty: no pump, the log is written directly as before — no perl on this node).
 */
export const PUMP_START = [
  `__jobdeck_pumpsrc='${PUMP_PERL}'`,
  '__jobdeck_pump= __jobdeck_lost="$__jobdeck_dir/$__jobdeck_exit' + LOST_SUFFIX + '"',
  'if [ -x /usr/bin/perl ]; then',
  // The count's space is taken here, before the task runs: the pump starts concurrently with a
  // task that may fill the disk before the pump could write its first byte.
  '  { printf "%-20s\\n" 0 >"$__jobdeck_lost"; } 2>/dev/null',
  // Ignored from the fork on (a signal before the pump sets its own would kill it: the lines
  // already in the pipe lost, the task's next write SIGPIPE); the wrapper's own traps are set
  // again at once, so setup and run start with the usual dispositions.
  '  trap "" TERM INT HUP USR1',
  '  exec > >(exec -c /usr/bin/perl -e "$__jobdeck_pumpsrc" "$__jobdeck_lost") 2>&1 && __jobdeck_pump=$!',
  '  trap "__jobdeck_term=1" TERM INT HUP; trap - USR1',
  'fi',
].join('\n');

/**
 * The wrapper's drain (bash function, called by __jobdeck_finish before it writes the record):
 * lets go of the pipe, tells the pump the phases ended, waits for it (a trapped signal interrupts
 * `wait`: waited again), and sets __jobdeck_lostn to the bytes the log could not take.
 */
export const PUMP_DRAIN = [
  '__jobdeck_drain() {',
  '  __jobdeck_lostn=0',
  '  [ -n "$__jobdeck_pump" ] || return 0',
  '  exec >/dev/null 2>&1',
  '  kill -USR1 "$__jobdeck_pump" 2>/dev/null',
  '  while kill -0 "$__jobdeck_pump" 2>/dev/null; do wait "$__jobdeck_pump"; [ $? = 127 ] && break; done',
  '  __jobdeck_pump=',
  '  read -r __jobdeck_lostn <"$__jobdeck_lost" 2>/dev/null',
  '  case $__jobdeck_lostn in "" | *[!0-9]*) __jobdeck_lostn=0 ;; esac',
  '}',
].join('\n');
