import { useState } from 'preact/hooks';
import { admin, ok, type Schemas } from '../api';
import { ErrorBox, Field, Loading, Notice, Pager, SecretOnce, Table, useAction, useLoad, usePagedList } from '../ui';

type Webhook = Schemas['WebhookResponse'];
type WebhookEvent = Webhook['events'][number];

const EVENTS: Array<[WebhookEvent, string]> = [
  ['chart.first_place', 'a new first place on a chart'],
  ['player.atp_top', 'a player enters the ATP top N'],
  ['player.personal_best', 'every personal best (frequent)'],
  ['player.banned', 'a ban'],
  ['player.unbanned', 'an unban'],
  ['play.flagged', 'a play failed a check'],
  ['play.voided', 'a play voided'],
  ['server.offline', 'a game server went offline'],
];

function CreateForm({ onCreated }: { onCreated: (webhook: Schemas['CreatedWebhookResponse']) => void }) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [format, setFormat] = useState<Webhook['format']>('json');
  const [events, setEvents] = useState<WebhookEvent[]>(['chart.first_place']);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await ok(admin.POST('/admin/webhooks', { body: { name, url, format, events } }));
      setName('');
      setUrl('');
      onCreated(created);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Register a webhook">
      <h2>Register a webhook</h2>
      <p class="muted">
        Signed JSON (or a Discord message) for each event, retried for 25 hours. Only public addresses are called. The
        signing secret is shown once.
      </p>
      <div class="row wrap">
        <Field label="Name">
          <input name="name" value={name} required maxLength={64} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="URL">
          <input
            name="url"
            type="url"
            value={url}
            required
            maxLength={2048}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </Field>
        <Field label="Format">
          <select name="format" value={format} onChange={(e) => setFormat(e.currentTarget.value as Webhook['format'])}>
            <option value="json">json (signed event)</option>
            <option value="discord">discord (embed message)</option>
          </select>
        </Field>
      </div>
      <fieldset class="row wrap">
        <legend>Events</legend>
        {EVENTS.map(([type, what]) => (
          <label key={type}>
            <input
              type="checkbox"
              aria-label={type}
              checked={events.includes(type)}
              onChange={(e) =>
                setEvents(e.currentTarget.checked ? [...events, type] : events.filter((other) => other !== type))
              }
            />{' '}
            {type} <span class="muted">({what})</span>
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={action.busy || events.length === 0}>
        Register
      </button>
      <ErrorBox error={action.error} />
    </form>
  );
}

/** A webhook's delivery log, newest first. */
function Deliveries({ webhook }: { webhook: Webhook }) {
  const log = usePagedList(
    (cursor) =>
      ok(
        admin.GET('/admin/webhooks/{id}/deliveries', {
          params: { path: { id: webhook.id }, query: { limit: 50, cursor } },
        }),
      ),
    [webhook.id],
  );
  return (
    <div class="card">
      <h2>Deliveries of {webhook.name}</h2>
      <button type="button" class="secondary" onClick={log.reload}>
        Refresh deliveries
      </button>
      <ErrorBox error={log.error} />
      <Loading loading={log.loading && !log.data} />
      {log.data && (
        <Table
          label={`Deliveries of ${webhook.name}`}
          head={['Delivery', 'Event', 'State', 'Attempts', 'Last status', 'Last error', 'Created', 'Next attempt']}
        >
          {log.data.items.map((delivery) => (
            <tr key={delivery.id}>
              <td>
                <code>{delivery.id}</code>
              </td>
              <td>{delivery.type}</td>
              <td>{delivery.state}</td>
              <td>{delivery.attempts}</td>
              <td>{delivery.lastStatus ?? '–'}</td>
              <td>{delivery.lastError ?? ''}</td>
              <td>{delivery.createdAt}</td>
              <td>{delivery.nextAttemptAt ?? ''}</td>
            </tr>
          ))}
        </Table>
      )}
      <Pager {...log.pager} />
    </div>
  );
}

export function WebhooksPage() {
  const list = useLoad(() => ok(admin.GET('/admin/webhooks')), []);
  const action = useAction();
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [shown, setShown] = useState<number | null>(null);
  const setEnabled = (webhook: Webhook, enabled: boolean) =>
    action.run(async () => {
      await ok(admin.PATCH('/admin/webhooks/{id}', { params: { path: { id: webhook.id } }, body: { enabled } }));
      setDone(`${enabled ? 'Turned on' : 'Paused'} ${webhook.name}.`);
      list.reload();
    });
  const rotate = (webhook: Webhook) =>
    action.run(async () => {
      if (
        !confirm(
          `Give ${webhook.name} a new signing secret? The current one keeps signing beside it for a day, for the receiver to take the new one.`,
        )
      )
        return;
      const rotated = await ok(
        admin.POST('/admin/webhooks/{id}/secret', { params: { path: { id: webhook.id } }, body: {} }),
      );
      setDone(
        `New secret for ${rotated.name}: give it to the receiver; the old one also signs until ${rotated.previousSecretExpiresAt ?? 'now'}.`,
      );
      setSecret({ label: `New signing secret of ${rotated.name}`, value: rotated.secret });
      list.reload();
    });
  const remove = (webhook: Webhook) =>
    action.run(async () => {
      if (!confirm(`Delete ${webhook.name} with its delivery log? Deliveries not yet sent are dropped.`)) return;
      await ok(admin.DELETE('/admin/webhooks/{id}', { params: { path: { id: webhook.id } } }));
      setDone(`Deleted ${webhook.name}.`);
      if (shown === webhook.id) setShown(null);
      list.reload();
    });
  const shownWebhook = list.data?.items.find((webhook) => webhook.id === shown) ?? null;
  return (
    <section>
      <h1>Webhooks</h1>
      {done && <Notice>{done}</Notice>}
      {secret && <SecretOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />}
      <ErrorBox error={action.error} />
      <CreateForm
        onCreated={(created) => {
          setDone(`Registered ${created.name} (id ${created.id}): give the signing secret to the receiver now.`);
          setSecret({ label: `Signing secret of ${created.name}`, value: created.secret });
          list.reload();
        }}
      />
      <div class="row wrap">
        <button type="button" class="secondary" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={list.error} />
      <Loading loading={list.loading && !list.data} />
      {list.data && (
        <Table
          label="Webhooks"
          head={['ID', 'Name', 'Format', 'Events', 'State', 'Pending', 'Given up', 'Failing since', '']}
        >
          {list.data.items.map((webhook) => (
            <tr key={`${webhook.id}:${String(webhook.enabled)}`}>
              <td>{webhook.id}</td>
              <td>{webhook.name}</td>
              <td>{webhook.format}</td>
              <td>{webhook.events.join(' ')}</td>
              <td>
                {webhook.enabled ? (
                  <span class="badge on">on</span>
                ) : (
                  <span class="badge off">{webhook.disabledReason ? `off: ${webhook.disabledReason}` : 'paused'}</span>
                )}
              </td>
              <td>{webhook.pending}</td>
              <td>{webhook.failed}</td>
              <td>{webhook.failingSince ?? ''}</td>
              <td>
                <button type="button" class="secondary" onClick={() => setShown(webhook.id)}>
                  Deliveries
                </button>
                <button
                  type="button"
                  class="secondary"
                  disabled={action.busy}
                  onClick={() => void setEnabled(webhook, !webhook.enabled)}
                >
                  {webhook.enabled ? 'Pause' : 'Turn on'}
                </button>
                <button type="button" class="secondary" disabled={action.busy} onClick={() => void rotate(webhook)}>
                  New secret
                </button>
                <button type="button" class="danger" disabled={action.busy} onClick={() => void remove(webhook)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </Table>
      )}
      {shownWebhook && <Deliveries key={shownWebhook.id} webhook={shownWebhook} />}
    </section>
  );
}
