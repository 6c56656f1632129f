import { useState } from 'preact/hooks';
import { api, Page } from '../api';
import { ErrorBox, formatTime, Loading, Notice, Pager, Table, Time, useAction, useCan, useLoad } from '../ui';

export interface Ban {
  banId: number;
  uid: number;
  username: string;
  reason: string;
  message: string;
  until: string | null;
  createdAt: string;
}

export function BansPage() {
  const can = useCan();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const bans = useLoad(() => api<Page<Ban>>('GET', '/admin/bans', { query: { limit: 50, cursor } }), [cursor]);
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const unban = (ban: Ban) =>
    action.run(async () => {
      if (!confirm(`Lift the ban of ${ban.username}?`)) return;
      await api('DELETE', `/admin/players/${ban.uid}/ban`);
      setDone(`Lifted the ban of ${ban.username}`);
      bans.reload();
    });
  return (
    <section>
      <h1>Active bans</h1>
      <ErrorBox error={bans.error} />
      <ErrorBox error={action.error} />
      {done && <Notice>{done}</Notice>}
      <Loading loading={bans.loading && !bans.data} />
      {bans.data && bans.data.items.length === 0 && <p class="muted">No ban in force.</p>}
      {bans.data && bans.data.items.length > 0 && (
        <Table label="Active bans" head={['Player', 'Reason', 'Message', 'Until', 'Since', '']}>
          {bans.data.items.map((ban) => (
            <tr key={ban.banId}>
              <td>
                <a href={`#/players/${ban.uid}`}>{ban.username}</a> <span class="muted">#{ban.uid}</span>
              </td>
              <td>{ban.reason}</td>
              <td>{ban.message}</td>
              <td>{ban.until ? formatTime(ban.until) : 'permanent'}</td>
              <td>
                <Time value={ban.createdAt} />
              </td>
              <td>
                {can('players.ban') && (
                  <button type="button" class="secondary" disabled={action.busy} onClick={() => void unban(ban)}>
                    Unban
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager
        cursor={bans.data?.nextCursor ?? null}
        atFirst={cursors.length === 0}
        onFirst={() => setCursors([])}
        onNext={() => bans.data?.nextCursor && setCursors([...cursors, bans.data.nextCursor])}
      />
    </section>
  );
}
