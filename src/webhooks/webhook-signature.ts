import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature of a delivery (docs/operations.md "Webhooks" shows a receiver checking it):
 * `X-Rhythmc-Signature: sha256=<hex>` where hex is HMAC-SHA256(secret, `${timestamp}.${body}`) and
 * timestamp is `X-Rhythmc-Timestamp` (Unix seconds of this attempt). While a rotated-out secret
 * still signs, the header lists both, comma-separated, the current secret's first: a receiver
 * accepts the delivery when any one matches. A receiver refuses a timestamp too far from its clock
 * (a replay) and dedupes on `X-Rhythmc-Delivery`.
 */
export const SIGNATURE_HEADER = 'x-rhythmc-signature';
export const TIMESTAMP_HEADER = 'x-rhythmc-timestamp';
export const DELIVERY_HEADER = 'x-rhythmc-delivery';
export const EVENT_HEADER = 'x-rhythmc-event';

export function signDelivery(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The header's value: one signature per secret (the current one, then one rotated out still signing). */
export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return secrets.map((secret) => signDelivery(secret, timestamp, body)).join(',');
}

/**
 * What a receiver does: one of the header's signatures matches and the timestamp is within
 * `toleranceSeconds` of `nowSeconds`.
 */
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
  return headers.signature.split(',').some((signature) => {
    const given = Buffer.from(signature.trim());
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
}
