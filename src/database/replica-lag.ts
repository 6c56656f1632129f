/** A WAL position ('16/B374D848') as a number of bytes. */
export function lsnBytes(lsn: string): bigint {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(lsn);
  if (!match) throw new Error(`Not a WAL position: ${lsn}`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

/** The most primary samples kept while the replica is behind (a check a second: an hour). */
const MAX_SAMPLES = 3_600;

/**
 * How stale a replica is, from the primary's WAL position and the replica's replayed position
 * (docs/decisions.md "Read replica"): each check notes when the primary was at which position,
 * then reads how far the replica has replayed. The replica holds everything the primary had at
 * the latest noted time whose position it has replayed: it is "fresh as of" that time, and its
 * lag is the time since. An idle primary writes no WAL, so a replica that replayed all of it
 * stays fresh (pg_last_xact_replay_timestamp() would age there); a replica whose replay stopped
 * ages from the moment the primary wrote something it lacks, whether or not the primary writes
 * again.
 */
export class ReplicaLag {
  private readonly samples: Array<{ at: number; position: bigint }> = [];
  /** The primary's time up to which the replica is known to hold everything; null: not yet known. */
  private freshAsOf: number | null = null;

  constructor(private readonly since: number) {}

  /** The primary was at `position` at `at` (ms); note it before reading the replica. */
  primaryAt(at: number, position: bigint): void {
    this.samples.push({ at, position });
    if (this.samples.length > MAX_SAMPLES) this.samples.shift();
  }

  /** The replica has replayed up to `position`: the latest sample it covers makes it fresh as of that sample's time. */
  replayed(position: bigint): void {
    let covered = -1;
    for (let i = 0; i < this.samples.length; i++) if (this.samples[i].position <= position) covered = i;
    if (covered < 0) return;
    this.freshAsOf = Math.max(this.freshAsOf ?? 0, this.samples[covered].at);
    this.samples.splice(0, covered + 1);
  }

  /** Milliseconds the replica may lack at `now` (since the start while it was never seen fresh). */
  lagMs(now: number): number {
    return Math.max(0, now - (this.freshAsOf ?? this.since));
  }

  /** The time the replica is fresh as of (null: never seen). */
  freshAt(): number | null {
    return this.freshAsOf;
  }
}
