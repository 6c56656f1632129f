import { useState } from 'preact/hooks';
import { admin, ok, type Schemas } from '../api';
import { ErrorBox, formatTime, Loading, Notice, Pager, Table, Time, useAction, useCan, usePagedList } from '../ui';

type Ban = Schemas['AdminBanResponse'];

export function BansPage() {
  const can = useCan();
  const bans = usePagedList((cursor) => ok(admin.GET('/admin/bans', { params: { query: { limit: 50, cursor } } })), []);
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const unban = (ban: Ban) =>
    action.run(async () => {
      if (!confirm(`Lift the ban of ${ban.username}?`)) return;
      await ok(admin.DELETE('/admin/players/{uid}/ban', { params: { path: { uid: ban.uid } } }));
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
      <Pager {...bans.pager} />
    </section>
  );
}
