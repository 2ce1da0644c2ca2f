import { noteError, type MonitorResources } from './resources';

/**
 * A monitor system's background round, run every `intervalMs` (docs/design.md §6): a round
 * asked for while one runs joins it instead of starting a second, and a failing round is logged
 * (noteError) and left to the next one, so a timer never stacks rounds or throws. Used by the
 * usage sampler and the retention system.
 */
export class PeriodicRound {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  /**
   * @param res the monitor's resources (for the log)
   * @param what names the round in a logged failure ("usage sampling")
   * @param body one round's work
   */
  constructor(
    private readonly res: MonitorResources,
    private readonly what: string,
    private readonly body: () => Promise<void>,
  ) {}

  /**
   * Starts the rounds every `intervalMs` (ms); a no-op when already started or when intervalMs ≤ 0.
   * `due` (optional) is asked at each tick: false skips that tick's round (a system that spaces
   * its rounds out further than the timer); run() is never skipped.
   */
  start(intervalMs: number, due?: () => boolean): void {
    if (intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (!due || due()) void this.run();
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops the rounds and waits for one in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One round now, or the one running (joined). Never throws. */
  run(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.body()
      .catch((err: unknown) => noteError(this.res, err, this.what))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }
}
