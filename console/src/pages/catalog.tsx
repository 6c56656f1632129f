import { useState } from 'preact/hooks';
import { api, ApiError, batchProblems, Page } from '../api';
import { ErrorBox, Field, Loading, Notice, Pager, Table, useLoad } from '../ui';

interface Chart {
  levelId: number;
  name: string;
  difficultyConstant: number;
  version: string;
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

interface Collection {
  key: string;
  type: string;
  unlockMethod: Record<string, unknown>;
  properties: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

type Kind = 'charts' | 'collections';

/** The stored rows as a PUT batch (the definition fields only). */
function asBatch(kind: Kind, items: Array<Chart | Collection>): unknown[] {
  return kind === 'charts'
    ? (items as Chart[]).map(({ levelId, name, difficultyConstant, version, active }) => ({
        levelId,
        name,
        difficultyConstant,
        version,
        active,
      }))
    : (items as Collection[]).map(({ key, type, unlockMethod, properties }) => ({
        key,
        type,
        unlockMethod,
        properties,
      }));
}

/** " 4101" or " rhythmc:title.x": the entry's key, to tell the entries apart. */
function entryName(entry: unknown, kind: Kind): string {
  if (entry === null || typeof entry !== 'object') return '';
  const key: unknown = (entry as Record<string, unknown>)[kind === 'charts' ? 'levelId' : 'key'];
  return typeof key === 'string' || typeof key === 'number' ? ` (${key})` : '';
}

const EXAMPLE: Record<Kind, string> = {
  charts: '[\n  { "levelId": 1, "name": "Song", "difficultyConstant": 10.5, "version": "1.0", "active": true }\n]',
  collections: '[\n  { "key": "rhythmc:title.example", "type": "title", "unlockMethod": {}, "properties": {} }\n]',
};

function BatchEditor({ kind, initial, onSaved }: { kind: Kind; initial: string; onSaved: () => void }) {
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
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      const answer = await api<{ upserted: number }>('PUT', `/admin/${kind}`, { body: parsed });
      setSaved(`Stored: ${answer.upserted} upserted`);
      onSaved();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };
  const problems = error instanceof ApiError && error.status === 400 ? batchProblems(error.message) : null;
  const entries = Array.isArray(parsed) ? (parsed as unknown[]) : [];
  return (
    <form class="card" onSubmit={(event) => void save(event)} aria-label={`Edit ${kind}`}>
      <h2>Edit a batch</h2>
      <p class="muted">
        A JSON array of definitions, upserted by {kind === 'charts' ? 'levelId' : 'key'}; the whole batch is checked
        first and nothing is stored when an entry is wrong.
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
                Entry [{index}]{entryName(entries[index], kind)}
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
  const [filter, setFilter] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const query = kind === 'charts' ? { active: filter, limit: 100, cursor } : { type: filter, limit: 100, cursor };
  const page = useLoad(() => api<Page<Chart | Collection>>('GET', `/admin/${kind}`, { query }), [kind, filter, cursor]);
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <section>
      <h1>{kind === 'charts' ? 'Charts' : 'Collections'}</h1>
      <div class="row wrap">
        {kind === 'charts' ? (
          <Field label="Show">
            <select
              value={filter}
              onChange={(event) => {
                setCursors([]);
                setFilter(event.currentTarget.value);
              }}
            >
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
              onChange={(event) => {
                setCursors([]);
                setFilter(event.currentTarget.value.trim());
              }}
            />
          </Field>
        )}
        <button
          type="button"
          class="secondary"
          onClick={() =>
            setEditing(
              page.data && page.data.items.length > 0
                ? JSON.stringify(asBatch(kind, page.data.items), null, 2)
                : EXAMPLE[kind],
            )
          }
        >
          Edit this page as JSON
        </button>
        <button type="button" class="secondary" onClick={() => setEditing(EXAMPLE[kind])}>
          New batch
        </button>
      </div>
      {editing !== null && <BatchEditor key={editing} kind={kind} initial={editing} onSaved={page.reload} />}
      <ErrorBox error={page.error} />
      <Loading loading={page.loading && !page.data} />
      {page.data && page.data.items.length === 0 && <p class="muted">Nothing stored.</p>}
      {page.data && page.data.items.length > 0 && kind === 'charts' && (
        <Table label="Charts" head={['levelId', 'Name', 'Constant', 'Version', 'Active', 'Updated']}>
          {(page.data.items as Chart[]).map((chart) => (
            <tr key={chart.levelId}>
              <td>{chart.levelId}</td>
              <td>{chart.name}</td>
              <td>{chart.difficultyConstant}</td>
              <td>{chart.version}</td>
              <td>{chart.active ? 'yes' : 'no'}</td>
              <td>{chart.updatedAt}</td>
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
              <td>{collection.updatedAt}</td>
            </tr>
          ))}
        </Table>
      )}
      <Pager
        cursor={page.data?.nextCursor ?? null}
        atFirst={cursors.length === 0}
        onFirst={() => setCursors([])}
        onNext={() => page.data?.nextCursor && setCursors([...cursors, page.data.nextCursor])}
      />
    </section>
  );
}
