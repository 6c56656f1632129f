/**
 * The layout of rating_history_day (migrations/1795882000000-RatingHistory.ts): a row holds one day
 * of a block of 2^BUCKET_BITS uids, bucket = uid >> BUCKET_BITS, and each player of it at its
 * slot, uid & SLOT_MASK, in four parallel arrays. The history read and the privacy map (export,
 * erasure) both find a player through these.
 */
export const BUCKET_BITS = 8;
export const SLOT_MASK = 2 ** BUCKET_BITS - 1;

/** The bucket and the slot of the uid `uid` (an SQL bigint expression). */
export const historyBucket = (uid: string) => `(${uid} >> ${BUCKET_BITS})`;
export const historySlot = (uid: string) => `(${uid} & ${SLOT_MASK})::smallint`;
