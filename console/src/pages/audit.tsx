import { useState } from 'preact/hooks';
import { admin, ok } from '../api';
import { ErrorBox, Field, Loading, Pager, Table, Time, usePagedList } from '../ui';

interface Filters {
  target: string;
  action: string;
  actor: string;
}

/** The audit log, newest first: by target (`#/audit/player:42`), action or person. */
export function AuditPage({ target: initialTarget }: { target: string }) {
  const [form, setForm] = useState<Filters>({ target: initialTarget, action: '', actor: '' });
  const [filters, setFilters] = useState<Filters>(form);
  const page = usePagedList(
    (cursor) => ok(admin.GET('/admin/audit', { params: { query: { ...filters, limit: 50, cursor } } })),
    [filters.target, filters.action, filters.actor],
  );
  const field = (name: keyof Filters) => (event: { currentTarget: HTMLInputElement }) =>
    setForm({ ...form, [name]: event.currentTarget.value });
  return (
    <section>
      <h1>Audit log</h1>
      <form
        class="row wrap"
        aria-label="Filter the audit log"
        onSubmit={(event) => {
          event.preventDefault();
          page.pager.onFirst();
          setFilters({ target: form.target.trim(), action: form.action.trim(), actor: form.actor.trim() });
        }}
      >
        <Field label="Target (e.g. player:1002, server:7)">
          <input name="target" value={form.target} onInput={field('target')} />
        </Field>
        <Field label="Action (e.g. player.ban)">
          <input name="action" value={form.action} onInput={field('action')} />
        </Field>
        <Field label="Person (a staff name, ADMIN_TOKEN)">
          <input name="actor" value={form.actor} onInput={field('actor')} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={page.error} />
      <Loading loading={page.loading && !page.data} />
      {page.data && page.data.items.length === 0 && <p class="muted">No entry.</p>}
      {page.data && page.data.items.length > 0 && (
        <Table
          label="Audit log"
          head={['Time', 'Who', 'Action', 'Target', 'Summary', 'Credential', 'Address', 'Request']}
        >
          {page.data.items.map((entry) => (
            <tr key={entry.id}>
              <td>
                <Time value={entry.time} />
              </td>
              <td class="nowrap">{entry.actor}</td>
              <td class="nowrap">{entry.action}</td>
              <td class="mono nowrap">{entry.target}</td>
              <td class="mono small">{JSON.stringify(entry.summary)}</td>
              <td class="mono small">{entry.credential}</td>
              <td class="mono nowrap">{entry.sourceAddress ?? '—'}</td>
              <td class="mono small">{entry.requestId ?? '—'}</td>
            </tr>
          ))}
        </Table>
      )}
      <Pager {...page.pager} />
    </section>
  );
}
