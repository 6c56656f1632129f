import { useState } from 'preact/hooks';
import { admin, batchProblems, ok, type Schemas } from '../api';
import { ErrorBox, Field, Loading, Notice, Pager, Table, Time, useCan, usePagedList } from '../ui';

type Chart = Schemas['AdminChartResponse'];
type Collection = Schemas['AdminCollectionResponse'];

type Kind = 'charts' | 'collections';

/**
 * The stored rows as a PUT batch: every field PUT accepts and the API stores (chart `notes`
 * included: PUT without it clears it). `createdAt` is left out: absent, a stored row keeps its own
 * (the list shows it to the second, so sending it back would drop the fraction).
 */
function asBatch(kind: Kind, items: Array<Chart | Collection>): unknown[] {
  return kind === 'charts'
    ? (items as Chart[]).map(({ levelId, name, difficultyConstant, version, active, notes }) => ({
        levelId,
        name,
        difficultyConstant,
        version,
        active,
        notes,
      }))
    : (items as Collection[]).map(({ key, type, unlockMethod, properties }) => ({
        key,
        type,
        unlockMethod,
        properties,
      }));
}

/** JSON with object keys sorted at every depth: two entries are the same definition when these agree. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : inner,
  );
}

/** The entry's key (levelId or key), or undefined when it has none. */
function keyOf(entry: unknown, kind: Kind): string | undefined {
  if (entry === null || typeof entry !== 'object') return undefined;
  const key: unknown = (entry as Record<string, unknown>)[kind === 'charts' ? 'levelId' : 'key'];
  return typeof key === 'string' || typeof key === 'number' ? JSON.stringify(key) : undefined;
}

/** The page as loaded (canonical entries by key): what an edit is compared with. */
type Baseline = Map<string, string>;

function baselineOf(kind: Kind, batch: unknown[]): Baseline {
  return new Map(batch.map((entry) => [keyOf(entry, kind)!, canonical(entry)]));
}

/**
 * What to PUT: the entries that are new or differ from the page as loaded, with their places in
 * the text. Unchanged entries are not sent, so a save never rewrites a row nobody edited (nor
 * turns an untouched placeholder into a defined chart). A body that is not an array goes as it is,
 * for the API to refuse.
 */
function changedEntries(kind: Kind, parsed: unknown, baseline: Baseline): { body: unknown; places: number[] } {
  if (!Array.isArray(parsed)) return { body: parsed, places: [] };
  const places: number[] = [];
  parsed.forEach((entry: unknown, index) => {
    const key = keyOf(entry, kind);
    if (key === undefined || baseline.get(key) !== canonical(entry)) places.push(index);
  });
  return { body: places.map((index) => parsed[index] as unknown), places };
}

/** " 4101" or " rhythmc:title.x": the entry's key, to tell the entries apart. */
function entryName(entry: unknown, kind: Kind): string {
  if (entry === null || typeof entry !== 'object') return '';
  const key: unknown = (entry as Record<string, unknown>)[kind === 'charts' ? 'levelId' : 'key'];
  return typeof key === 'string' || typeof key === 'number' ? ` (${key})` : '';
}

const EXAMPLE: Record<Kind, string> = {
  charts:
    '[\n  { "levelId": 1, "name": "Song", "difficultyConstant": 10.5, "version": "1.0", "active": true, "notes": null }\n]',
  collections: '[\n  { "key": "rhythmc:title.example", "type": "title", "unlockMethod": {}, "properties": {} }\n]',
};

function BatchEditor({
  kind,
  initial,
  loaded,
  onSaved,
}: {
  kind: Kind;
  initial: string;
  /** The page as it was loaded (empty for a new batch). */
  loaded: Baseline;
  onSaved: () => void;
}) {
  const [text, setText] = useState(initial);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  let parsed: unknown = undefined;
  let parseError: string | null = null;
  try {
    parsed = JSON.parse(text);
  } catch (reason) {
    parseError = reason instanceof Error ? reason.message : String(reason);
  }
  const [places, setPlaces] = useState<number[]>([]);
  const [baseline, setBaseline] = useState(loaded);
  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setSaved(null);
    const changed = changedEntries(kind, parsed, baseline);
    const unchanged = Array.isArray(parsed) ? parsed.length - changed.places.length : 0;
    const kept = unchanged > 0 ? ` (${unchanged} unchanged, not sent)` : '';
    if (Array.isArray(changed.body) && changed.body.length === 0) {
      setSaved('Nothing changed: nothing sent');
      return;
    }
    setBusy(true);
    setPlaces(changed.places);
    try {
      // The entries as typed: the service checks each (a 400 names the problems by entry).
      const answer = await ok(
        kind === 'charts'
          ? admin.PUT('/admin/charts', { body: changed.body as Schemas['ChartDefinitionDto'][] })
          : admin.PUT('/admin/collections', { body: changed.body as Schemas['CollectionDefinitionDto'][] }),
      );
      setSaved(`Stored: ${answer.upserted} upserted${kept}`);
      // What was stored is the new baseline: saving again sends only what changes after this.
      if (Array.isArray(changed.body)) setBaseline(new Map([...baseline, ...baselineOf(kind, changed.body)]));
      onSaved();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };
  // The API numbers the entries it was sent; the list names them by their place in the text.
  const problems = batchProblems(error);
  const entries = Array.isArray(parsed) ? (parsed as unknown[]) : [];
  const placeOf = (index: number) => places[index] ?? index;
  return (
    <form class="card" onSubmit={(event) => void save(event)} aria-label={`Edit ${kind}`}>
      <h2>Edit a batch</h2>
      <p class="muted">
        A JSON array of definitions, upserted by {kind === 'charts' ? 'levelId' : 'key'}. Only the entries you add or
        change are sent; the whole batch is checked first and nothing is stored when an entry is wrong.
        {kind === 'charts' &&
          ' Placeholders (made by uploads of unknown levels) are listed too: changing one defines it, and it counts from then on.'}
      </p>
      <textarea
        name="batch"
        rows={14}
        spellcheck={false}
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
      />
      {parseError && <p class="error">Not JSON: {parseError}</p>}
      <div class="row">
        <button type="submit" disabled={busy || parseError !== null}>
          PUT /admin/{kind}
        </button>
      </div>
      {saved && <Notice>{saved}</Notice>}
      <ErrorBox error={error} />
      {problems && (
        <ul class="problems" aria-label="Problems by entry">
          {[...problems.entries()].map(([index, lines]) => (
            <li key={index}>
              <strong>
                Entry [{placeOf(index)}]{entryName(entries[placeOf(index)], kind)}
              </strong>
              <ul>
                {lines.map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </form>
  );
}

export function CatalogPage({ kind }: { kind: Kind }) {
  const can = useCan();
  const [filter, setFilter] = useState('');
  const page = usePagedList(
    (cursor): Promise<{ items: Array<Chart | Collection>; nextCursor: string | null }> =>
      kind === 'charts'
        ? ok(
            admin.GET('/admin/charts', {
              params: { query: { active: filter === '' ? undefined : filter === 'true', limit: 100, cursor } },
            }),
          )
        : ok(admin.GET('/admin/collections', { params: { query: { type: filter, limit: 100, cursor } } })),
    [kind, filter],
  );
  const [editing, setEditing] = useState<{ text: string; baseline: Baseline } | null>(null);
  return (
    <section>
      <h1>{kind === 'charts' ? 'Charts' : 'Collections'}</h1>
      <div class="row wrap">
        {kind === 'charts' ? (
          <Field label="Show">
            <select value={filter} onChange={(event) => setFilter(event.currentTarget.value)}>
              <option value="">all, inactive and placeholders included</option>
              <option value="true">active</option>
              <option value="false">inactive</option>
            </select>
          </Field>
        ) : (
          <Field label="Type">
            <input
              value={filter}
              placeholder="title, tag, assets…"
              onChange={(event) => setFilter(event.currentTarget.value.trim())}
            />
          </Field>
        )}
        {can('catalog.write') && (
          <>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                const batch = page.data && page.data.items.length > 0 ? asBatch(kind, page.data.items) : null;
                setEditing(
                  batch
                    ? { text: JSON.stringify(batch, null, 2), baseline: baselineOf(kind, batch) }
                    : { text: EXAMPLE[kind], baseline: new Map() },
                );
              }}
            >
              Edit this page as JSON
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => setEditing({ text: EXAMPLE[kind], baseline: new Map() })}
            >
              New batch
            </button>
          </>
        )}
      </div>
      {editing !== null && (
        <BatchEditor
          key={editing.text}
          kind={kind}
          initial={editing.text}
          loaded={editing.baseline}
          onSaved={page.reload}
        />
      )}
      <ErrorBox error={page.error} />
      <Loading loading={page.loading && !page.data} />
      {page.data && page.data.items.length === 0 && <p class="muted">Nothing stored.</p>}
      {page.data && page.data.items.length > 0 && kind === 'charts' && (
        <Table
          label="Charts"
          head={['levelId', 'Name', 'Constant', 'Version', 'Active', 'Notes', 'Placeholder', 'Created', 'Updated']}
        >
          {(page.data.items as Chart[]).map((chart) => (
            <tr key={chart.levelId}>
              <td>{chart.levelId}</td>
              <td>{chart.name}</td>
              <td>{chart.difficultyConstant}</td>
              <td>{chart.version}</td>
              <td>{chart.active ? 'yes' : 'no'}</td>
              <td>{chart.notes ?? '—'}</td>
              <td>{chart.placeholder ? <span class="badge off">placeholder</span> : 'no'}</td>
              <td>
                <Time value={chart.createdAt} />
              </td>
              <td>
                <Time value={chart.updatedAt} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      {page.data && page.data.items.length > 0 && kind === 'collections' && (
        <Table label="Collections" head={['Key', 'Type', 'Unlock method', 'Properties', 'Updated']}>
          {(page.data.items as Collection[]).map((collection) => (
            <tr key={collection.key}>
              <td class="mono">{collection.key}</td>
              <td>{collection.type}</td>
              <td class="mono small">{JSON.stringify(collection.unlockMethod)}</td>
              <td class="mono small">{JSON.stringify(collection.properties)}</td>
              <td>
                <Time value={collection.updatedAt} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager {...page.pager} />
    </section>
  );
}
