import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature of a delivery (docs/operations.md "Webhooks" shows a receiver checking it):
 * `X-Rhythmc-Signature: sha256=<hex>` where hex is HMAC-SHA256(secret, `${timestamp}.${body}`) and
 * timestamp is `X-Rhythmc-Timestamp` (Unix seconds of this attempt). A receiver refuses a
 * timestamp too far from its clock (a replay) and dedupes on `X-Rhythmc-Delivery`.
 */
export const SIGNATURE_HEADER = 'x-rhythmc-signature';
export const TIMESTAMP_HEADER = 'x-rhythmc-timestamp';
export const DELIVERY_HEADER = 'x-rhythmc-delivery';
export const EVENT_HEADER = 'x-rhythmc-event';

export function signDelivery(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What a receiver does: the signature matches and the timestamp is within `toleranceSeconds` of `nowSeconds`. */
export function verifyDelivery(
  secret: string,
  headers: { signature: string | undefined; timestamp: string | undefined },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const timestamp = Number(headers.timestamp);
  if (!headers.signature || !Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds)
    return false;
  const expected = Buffer.from(signDelivery(secret, timestamp, body));
  const given = Buffer.from(headers.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
