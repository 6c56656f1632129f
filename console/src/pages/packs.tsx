import { useState } from 'preact/hooks';
import { admin, ApiError, batchProblems, ok, type Schemas } from '../api';
import { ErrorBox, Loading, Notice, Table, useAction, useCan, useLoad } from '../ui';

type Pack = Schemas['AdminPackResponse'];

/** The stored packs as PUT /admin/packs takes them (size and SHA-1 are computed from the file). */
const asBatch = (packs: Pack[]) =>
  packs.map(({ name, displayName, type, availableSongs, file }) => ({ name, displayName, type, availableSongs, file }));

/**
 * Resource packs (GET /admin/packs) and the resource index: describe packs as JSON (PUT, upsert by
 * name), withdraw one (its pack links answer 404 from then on), rescan RESOURCE_DIR.
 */
export function PacksPage() {
  const can = useCan();
  const packs = useLoad(() => ok(admin.GET('/admin/packs')), []);
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const write = can('resources.write');
  const rescan = () =>
    action.run(async () => {
      const totals = await ok(admin.POST('/admin/resources/rescan'));
      setDone(
        `Rescanned: ${totals.data} data files, ${totals.lang} lang files, ${totals.packs} packs, ${totals.bytes} bytes`,
      );
      packs.reload();
    });
  const save = () =>
    action.run(async () => {
      let body: unknown;
      try {
        body = JSON.parse(editing ?? '[]');
      } catch (error) {
        throw new ApiError(0, 'JSON', `Not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
      }
      // The packs as typed: the service checks each (a 400 names the problems by entry).
      const answer = await ok(admin.PUT('/admin/packs', { body: body as Schemas['PackDto'][] }));
      setDone(`Saved ${answer.upserted} pack${answer.upserted === 1 ? '' : 's'}`);
      setEditing(null);
      packs.reload();
    });
  const withdraw = (pack: Pack) =>
    action.run(async () => {
      if (!confirm(`Withdraw ${pack.name}? Its pack links answer 404 from now on; the file stays.`)) return;
      await ok(admin.DELETE('/admin/packs/{name}', { params: { path: { name: pack.name } } }));
      setDone(`Withdrew ${pack.name}`);
      packs.reload();
    });
  const problems = batchProblems(action.error);
  return (
    <section>
      <div class="row spread">
        <h1>Packs & resources</h1>
        {write && (
          <div class="row">
            <button type="button" class="secondary" disabled={action.busy} onClick={() => void rescan()}>
              Rescan resources
            </button>
            <button
              type="button"
              class="secondary"
              disabled={action.busy || !packs.data}
              onClick={() => setEditing(JSON.stringify(asBatch(packs.data?.items ?? []), null, 2))}
            >
              Edit packs as JSON
            </button>
          </div>
        )}
      </div>
      <p class="muted">
        A pack's file is a .zip directly under packs/ of RESOURCE_DIR, in the index (rescan after adding one).
      </p>
      {done && <Notice>{done}</Notice>}
      <ErrorBox error={action.error} />
      {problems && (
        <ul aria-label="Problems by entry">
          {[...problems].map(([index, lines]) => (
            <li key={index}>
              Entry [{index}]: {lines.join('; ')}
            </li>
          ))}
        </ul>
      )}
      {editing !== null && (
        <div class="card">
          <textarea
            name="packs"
            rows={16}
            value={editing}
            aria-label="Packs as JSON"
            onInput={(event) => setEditing(event.currentTarget.value)}
          />
          <div class="row">
            <button type="button" disabled={action.busy} onClick={() => void save()}>
              PUT /admin/packs
            </button>
            <button type="button" class="secondary" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      <ErrorBox error={packs.error} />
      <Loading loading={packs.loading && !packs.data} />
      {packs.data && packs.data.items.length === 0 && <p class="muted">No pack is described.</p>}
      {packs.data && packs.data.items.length > 0 && (
        <Table
          label="Packs"
          head={['Name', 'Display name', 'Type', 'Songs', 'File', 'Size', 'SHA-1', ...(write ? [''] : [])]}
        >
          {packs.data.items.map((pack) => (
            <tr key={pack.name}>
              <td>{pack.name}</td>
              <td>{pack.displayName}</td>
              <td>{pack.type}</td>
              <td>{pack.availableSongs.length}</td>
              <td class="mono">{pack.file}</td>
              <td>{pack.size ?? <span class="warning">not indexed</span>}</td>
              <td class="mono small">{pack.sha1 ?? '—'}</td>
              {write && (
                <td>
                  <button type="button" class="secondary" disabled={action.busy} onClick={() => void withdraw(pack)}>
                    Withdraw
                  </button>
                </td>
              )}
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
