import { useState } from 'preact/hooks';
import { api, Page } from '../api';
import { ErrorBox, Field, Loading, Pager, Table, useLoad } from '../ui';

interface AuditEntry {
  id: number;
  time: string;
  action: string;
  target: string;
  summary: Record<string, unknown>;
  requestId: string | null;
  sourceAddress: string | null;
  credential: string;
}

export function AuditPage({ target: initialTarget }: { target: string }) {
  const [text, setText] = useState(initialTarget);
  const [target, setTarget] = useState(initialTarget);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(
    () => api<Page<AuditEntry>>('GET', '/admin/audit', { query: { target, limit: 50, cursor } }),
    [target, cursor],
  );
  return (
    <section>
      <h1>Audit log</h1>
      <form
        class="row wrap"
        onSubmit={(event) => {
          event.preventDefault();
          setCursors([]);
          setTarget(text.trim());
        }}
      >
        <Field label="Target (e.g. player:1002, server:7)">
          <input name="target" value={text} onInput={(event) => setText(event.currentTarget.value)} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={page.error} />
      <Loading loading={page.loading && !page.data} />
      {page.data && page.data.items.length === 0 && <p class="muted">No entry.</p>}
      {page.data && page.data.items.length > 0 && (
        <Table label="Audit log" head={['Time', 'Action', 'Target', 'Summary', 'Credential', 'Address', 'Request']}>
          {page.data.items.map((entry) => (
            <tr key={entry.id}>
              <td class="nowrap">{entry.time.replace('T', ' ')}</td>
              <td class="nowrap">{entry.action}</td>
              <td class="mono nowrap">{entry.target}</td>
              <td class="mono small">{JSON.stringify(entry.summary)}</td>
              <td>{entry.credential}</td>
              <td class="mono nowrap">{entry.sourceAddress ?? '—'}</td>
              <td class="mono small">{entry.requestId ?? '—'}</td>
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
