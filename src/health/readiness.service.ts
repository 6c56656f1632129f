import { Injectable, Logger } from '@nestjs/common';
import { WriteRefusals } from '../database/write-refusals';
import { ReadinessRepository } from './readiness.repository';

/** The probe write must be committed within this (a pooled connection, a round trip, a WAL flush). */
export const PROBE_TIMEOUT_MS = 3_000;
/** Readiness fails while a statement was refused for want of a resource (or read-only) this recently. */
export const REFUSAL_WINDOW_MS = 10_000;
const tooSlow = `the database did not take a write within ${PROBE_TIMEOUT_MS / 1000} s`;
/** A probe's answer serves the checks of this long after it (a flood of /health/ready writes 4 rows a second at most). */
export const PROBE_REUSE_MS = 250;

/**
 * Readiness (GET /health/ready, docs/decisions.md "Readiness"): not ready while no pooled
 * connection commits a one-row write within PROBE_TIMEOUT_MS (the database down, restarting or
 * read-only, the pool stuck, the WAL disk full), or while statements were refused for want of a
 * resource within REFUSAL_WINDOW_MS (a full data disk lets the probe's one-row write through while
 * inserts fail). Nothing is latched: the next check after the cause is gone passes.
 */
@Injectable()
export class ReadinessService {
  private readonly logger = new Logger('Readiness');
  private notReady: string | null = null;
  /** The probe write in flight, shared: never more than one, even after its check gave up waiting (a stuck pool). */
  private pendingWrite: Promise<string | null> | null = null;
  /** The last probe's answer and when it came (reused for PROBE_REUSE_MS). */
  private lastProbe: { at: number; reason: string | null } | null = null;

  constructor(
    private readonly repository: ReadinessRepository,
    private readonly refusals: WriteRefusals,
  ) {}

  /** null when ready, else why not. */
  async check(): Promise<string | null> {
    const reason = (await this.probe()) ?? this.recentRefusal();
    if (reason !== null && this.notReady === null) this.logger.warn(`Not ready: ${reason}`);
    if (reason === null && this.notReady !== null) this.logger.log('Ready again');
    this.notReady = reason;
    return reason;
  }

  /**
   * The probe: one pooled connection commits a one-row write within PROBE_TIMEOUT_MS. The route is
   * public, so checks arriving together share one write, a write that outlives its timeout is
   * waited on by the next checks instead of a second one queued behind it, and an answer is reused
   * for PROBE_REUSE_MS: a flood of /health/ready holds at most one of the pool's connections.
   */
  private async probe(): Promise<string | null> {
    if (this.lastProbe && Date.now() - this.lastProbe.at < PROBE_REUSE_MS) return this.lastProbe.reason;
    if (this.pendingWrite === null) {
      const started = Date.now();
      this.pendingWrite = this.repository.probeWrite().then(
        // A write that took longer than the timeout fails the checks that waited on it too.
        () => this.probed(Date.now() - started > PROBE_TIMEOUT_MS ? tooSlow : null),
        (error: unknown) =>
          this.probed(`the database did not take a write (${error instanceof Error ? error.message : String(error)})`),
      );
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(tooSlow), PROBE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.pendingWrite, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private probed(reason: string | null): string | null {
    this.pendingWrite = null;
    this.lastProbe = { at: Date.now(), reason };
    return reason;
  }

  private recentRefusal(): string | null {
    const refused = this.refusals.recent(REFUSAL_WINDOW_MS);
    return refused === null
      ? null
      : `the database refused a statement within ${REFUSAL_WINDOW_MS / 1000} s (${refused})`;
  }
}
