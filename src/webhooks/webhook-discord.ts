import type { DeliveryBody } from './webhook-events';

/**
 * The `discord` format: a Discord webhook message (an execute-webhook body with one embed) for
 * each event, so a Discord channel's webhook URL can be registered as is.
 * https://discord.com/developers/docs/resources/webhook#execute-webhook
 */
export interface DiscordMessage {
  username: string;
  allowed_mentions: { parse: never[] };
  embeds: Array<{
    title: string;
    description: string;
    color: number;
    timestamp: string;
    footer: { text: string };
    fields: Array<{ name: string; value: string; inline: boolean }>;
  }>;
}

const COLORS = { gold: 0xf1c40f, green: 0x2ecc71, red: 0xe74c3c, orange: 0xe67e22, grey: 0x95a5a6, blue: 0x3498db };

type Data = Record<string, unknown>;
const object = (value: unknown): Data => (value && typeof value === 'object' ? (value as Data) : {});
/** Text from the payload, Markdown neutralised (a player name cannot format or mention). */
const text = (value: unknown): string => {
  if (value === null || value === undefined) return '–';
  const raw = typeof value === 'string' ? value : JSON.stringify(value);
  return raw.replace(/[\\*_~`|>@#[\]()<:-]/g, (c) => `\\${c}`);
};
const name = (player: unknown) => text(object(player).username);
const chart = (value: unknown) => {
  const c = object(value);
  return c.name ? `${text(c.name)} (#${text(c.levelId)})` : `chart #${text(c.levelId)}`;
};
const percent = (value: unknown) => (typeof value === 'number' ? `${value.toFixed(2)} %` : '–');

function describe(type: string, data: Data): { title: string; description: string; color: number } {
  switch (type) {
    case 'chart.first_place': {
      const previous = object(data.previous);
      const before = data.previous ? ` (before: ${name(previous.player)}, ${percent(previous.acc)})` : '';
      return {
        title: 'New first place',
        description: `**${name(data.player)}** is first on ${chart(data.chart)} with ${percent(data.acc)}${before}`,
        color: COLORS.gold,
      };
    }
    case 'player.personal_best':
      return {
        title: 'Personal best',
        description: `**${name(data.player)}**: ${percent(data.acc)} on ${chart(data.chart)}`,
        color: COLORS.green,
      };
    case 'player.atp_top':
      return {
        title: `Top ${text(data.top)}`,
        description: `**${name(data.player)}** entered the top ${text(data.top)}: #${text(data.rank)} with ${text(data.atp)} ATP`,
        color: COLORS.blue,
      };
    case 'player.banned':
      return {
        title: 'Player banned',
        description: `**${name(data.player)}**${data.reason ? `: ${text(data.reason)}` : ''}${data.until ? ` (until ${text(data.until)})` : ''}`,
        color: COLORS.red,
      };
    case 'player.unbanned':
      return { title: 'Player unbanned', description: `**${name(data.player)}**`, color: COLORS.green };
    case 'play.flagged':
      return {
        title: 'Play flagged',
        description: `Play ${text(data.playId)} of **${name(data.player)}** on ${chart(data.chart)} failed: ${(Array.isArray(data.flags) ? data.flags : []).map(text).join(', ')}`,
        color: COLORS.orange,
      };
    case 'play.voided':
      return {
        title: 'Play voided',
        description: `Play ${text(data.playId)} of **${name(data.player)}** on ${chart(data.chart)}${data.reason ? `: ${text(data.reason)}` : ''}`,
        color: COLORS.grey,
      };
    case 'server.offline':
      return {
        title: 'Server offline',
        description: `**${text(object(data.server).name)}** (${text(data.reason)})`,
        color: COLORS.red,
      };
    default:
      return { title: text(type), description: '', color: COLORS.grey };
  }
}

/** The Discord message of one delivery. */
export function toDiscordMessage(delivery: DeliveryBody): DiscordMessage {
  const { title, description, color } = describe(delivery.type, delivery.data);
  return {
    username: 'rhythmc',
    allowed_mentions: { parse: [] },
    embeds: [
      {
        title,
        description: description.slice(0, 4_096),
        color,
        timestamp: delivery.createdAt,
        footer: { text: `${delivery.type} · ${delivery.id}` },
        fields: [],
      },
    ],
  };
}
