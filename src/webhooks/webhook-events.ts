/**
 * The events a webhook may want (docs/decisions.md "Webhooks"). Who writes each: the triggers of
 * migrations/1795872000000-Webhooks.ts, except the ban and unban (PlayerAdminService, in its
 * transaction) and an expired server session (WebhookDispatcher's sweep).
 */
export const WEBHOOK_EVENTS = [
  'chart.first_place',
  'player.atp_top',
  'player.personal_best',
  'player.banned',
  'player.unbanned',
  'play.flagged',
  'play.voided',
  'server.offline',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const WEBHOOK_FORMATS = ['json', 'discord'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** The JSON body of a `json` delivery: what a receiver parses and dedupes on (`id`). */
export interface DeliveryBody {
  /** The delivery id: the same in every attempt of this delivery, also in X-Rhythmc-Delivery. */
  id: string;
  /** The event id: shared by the deliveries of one event to several webhooks. */
  eventId: string;
  type: string;
  /** When the event happened (ISO 8601, UTC). */
  createdAt: string;
  data: Record<string, unknown>;
}
