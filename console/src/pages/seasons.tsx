import { useState } from 'preact/hooks';
import { admin, ok, type Schemas } from '../api';
import { ErrorBox, Field, Loading, Notice, Pager, Table, Time, useAction, useCan, usePagedList } from '../ui';

/** GET /admin/seasons: a season as staff see it. */
type Season = Schemas['SeasonResponse'];

/** `datetime-local` gives `YYYY-MM-DDTHH:mm` (seconds when set): the API takes `YYYY-MM-DDTHH:mm:ss`. */
const wire = (value: string) => (value.length === 16 ? `${value}:00` : value);

function CreateForm({ onCreated }: { onCreated: (season: Season) => void }) {
  const [form, setForm] = useState({ slug: '', name: '', startsAt: '', endsAt: '', collection: '', top: '' });
  const action = useAction();
  const set = (name: keyof typeof form) => (event: Event) =>
    setForm({ ...form, [name]: (event.currentTarget as HTMLInputElement).value });
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const closeRule =
        form.collection.trim() !== '' ? { collection: form.collection.trim(), top: Number(form.top) } : undefined;
      const created = await ok(
        admin.POST('/admin/seasons', {
          body: {
            slug: form.slug,
            name: form.name,
            startsAt: wire(form.startsAt),
            endsAt: wire(form.endsAt),
            ...(closeRule ? { closeRule } : {}),
          },
        }),
      );
      setForm({ slug: '', name: '', startsAt: '', endsAt: '', collection: '', top: '' });
      onCreated(created);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Create a season">
      <h2>Create a season</h2>
      <p class="muted">
        A period of the boards with its own ATP and chart boards (period season:&lt;slug&gt;): every counted play
        between its start and its end counts for it too. Seasons may overlap. The close rule grants a collection to the
        first players of its ATP board when it closes, and tells their game servers.
      </p>
      <div class="row wrap">
        <Field label="Slug">
          <input name="slug" value={form.slug} required maxLength={64} onInput={set('slug')} />
        </Field>
        <Field label="Name">
          <input name="name" value={form.name} required maxLength={128} onInput={set('name')} />
        </Field>
        <Field label="Starts">
          <input
            name="startsAt"
            type="datetime-local"
            step={1}
            value={form.startsAt}
            required
            onInput={set('startsAt')}
          />
        </Field>
        <Field label="Ends">
          <input name="endsAt" type="datetime-local" step={1} value={form.endsAt} required onInput={set('endsAt')} />
        </Field>
        <Field label="Grant collection (optional)">
          <input name="collection" value={form.collection} maxLength={128} onInput={set('collection')} />
        </Field>
        <Field label="To the top">
          <input
            name="top"
            type="number"
            min={1}
            max={1000}
            value={form.top}
            required={form.collection.trim() !== ''}
            onInput={set('top')}
          />
        </Field>
      </div>
      <button type="submit" disabled={action.busy}>
        Create
      </button>
      <ErrorBox error={action.error} />
    </form>
  );
}

function SeasonRow({
  season,
  busy,
  manage,
  onSave,
  onClose,
  onDelete,
}: {
  season: Season;
  busy: boolean;
  manage: boolean;
  onSave: (changes: { name?: string; endsAt?: string }) => void;
  onClose: () => void;
  onDelete: () => void;
}) {
  const [name, setName] = useState(season.name);
  const [endsAt, setEndsAt] = useState(season.endsAt);
  const open = season.state === 'scheduled' || season.state === 'open';
  const editable = manage && open;
  const changes = {
    ...(name !== season.name ? { name } : {}),
    ...(endsAt !== season.endsAt ? { endsAt: wire(endsAt) } : {}),
  };
  return (
    <tr>
      <td>{season.id}</td>
      <td>{season.slug}</td>
      <td>
        {editable ? (
          <input aria-label={`Name of ${season.slug}`} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        ) : (
          season.name
        )}
      </td>
      <td>
        <span class={`badge ${open ? 'on' : 'off'}`}>{season.state}</span>
      </td>
      <td>
        <Time value={season.startsAt} />
      </td>
      <td>
        {editable ? (
          <input
            aria-label={`End of ${season.slug}`}
            type="datetime-local"
            step={1}
            value={endsAt}
            onInput={(e) => setEndsAt(e.currentTarget.value)}
          />
        ) : (
          <Time value={season.endsAt} />
        )}
      </td>
      <td>{season.closeRule ? `${season.closeRule.collection} to the top ${season.closeRule.top}` : '—'}</td>
      <td>
        <a href={`#/boards/season:${season.slug}`}>{open ? 'Live board' : 'Archived board'}</a>{' '}
        {editable && (
          <>
            <button
              type="button"
              class="secondary"
              disabled={busy || Object.keys(changes).length === 0}
              onClick={() => onSave(changes)}
            >
              Save
            </button>
            {season.state === 'open' && (
              <button type="button" class="danger" disabled={busy} onClick={onClose}>
                Close now
              </button>
            )}
            {season.state === 'scheduled' && (
              <button type="button" class="danger" disabled={busy} onClick={onDelete}>
                Delete
              </button>
            )}
          </>
        )}
      </td>
    </tr>
  );
}

export function SeasonsPage() {
  const can = useCan();
  const manage = can('seasons.manage');
  const seasons = usePagedList(
    (cursor) => ok(admin.GET('/admin/seasons', { params: { query: { limit: 100, cursor } } })),
    [],
  );
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const save = (season: Season, changes: { name?: string; endsAt?: string }) =>
    action.run(async () => {
      await ok(admin.PATCH('/admin/seasons/{id}', { params: { path: { id: season.id } }, body: changes }));
      setDone(`Saved ${season.slug}.`);
      seasons.reload();
    });
  const close = (season: Season) =>
    action.run(async () => {
      if (
        !confirm(`Close ${season.slug} now? Its boards are frozen and its close rule applied; this cannot be undone.`)
      )
        return;
      const closed = await ok(admin.POST('/admin/seasons/{id}/close', { params: { path: { id: season.id } } }));
      setDone(
        closed.granted
          ? `Closed ${season.slug}: ${closed.granted.collection} granted to ${closed.granted.uids.length} player(s)${closed.granted.uids.length > 0 ? ` (${closed.granted.uids.join(', ')})` : ''}.`
          : `Closed ${season.slug}.`,
      );
      seasons.reload();
    });
  const remove = (season: Season) =>
    action.run(async () => {
      if (!confirm(`Delete ${season.slug}? It has not started.`)) return;
      await ok(admin.DELETE('/admin/seasons/{id}', { params: { path: { id: season.id } } }));
      setDone(`Deleted ${season.slug}.`);
      seasons.reload();
    });
  return (
    <section>
      <h1>Seasons</h1>
      {done && <Notice>{done}</Notice>}
      <ErrorBox error={action.error} />
      {manage && (
        <CreateForm
          onCreated={(season) => {
            setDone(`Created ${season.slug} (id ${season.id}).`);
            seasons.reload();
          }}
        />
      )}
      <ErrorBox error={seasons.error} />
      <Loading loading={seasons.loading && !seasons.data} />
      {seasons.data &&
        (seasons.data.items.length === 0 ? (
          <p class="muted">No seasons yet.</p>
        ) : (
          <Table label="Seasons" head={['ID', 'Slug', 'Name', 'State', 'Starts', 'Ends', 'Close rule', '']}>
            {seasons.data.items.map((season) => (
              <SeasonRow
                key={`${season.id}:${season.name}:${season.endsAt}:${season.state}`}
                season={season}
                busy={action.busy}
                manage={manage}
                onSave={(changes) => void save(season, changes)}
                onClose={() => void close(season)}
                onDelete={() => void remove(season)}
              />
            ))}
          </Table>
        ))}
      <Pager {...seasons.pager} />
    </section>
  );
}
