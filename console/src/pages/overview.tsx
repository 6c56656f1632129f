import { admin, ok } from '../api';
import { ErrorBox, Loading, Table, Time, formatTime, useLoad } from '../ui';

function Stat({ label, value }: { label: string; value: string | number }) {
  return (
    <div class="stat">
      <span class="stat-value">{value}</span>
      <span class="stat-label">{label}</span>
    </div>
  );
}

export function OverviewPage() {
  const overview = useLoad(() => ok(admin.GET('/admin/overview')), []);
  const bans = useLoad(() => ok(admin.GET('/admin/bans', { params: { query: { limit: 10 } } })), []);
  const data = overview.data;
  return (
    <section>
      <div class="row spread">
        <h1>Overview</h1>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            overview.reload();
            bans.reload();
          }}
        >
          Refresh
        </button>
      </div>
      <ErrorBox error={overview.error} />
      <Loading loading={overview.loading && !data} />
      {data && (
        <>
          <div class="stats">
            <Stat label="servers online" value={data.serversOnline} />
            <Stat label="players online" value={data.playersOnline} />
            <Stat label="uploads in the last minute" value={data.uploads.lastMinute} />
            <Stat label="uploads per minute (15 min average)" value={(data.uploads.last15Minutes / 15).toFixed(1)} />
          </div>
          <p class={data.maintenance.enabled ? 'warning' : 'muted'}>
            Maintenance {data.maintenance.enabled ? `ON: ${data.maintenance.message || '(no message)'}` : 'off'}
            {' · '}
            {data.pluginPolicy
              ? `plugin versions ${data.pluginPolicy.minPluginVersion}–${data.pluginPolicy.latestPluginVersion}`
              : 'no plugin policy'}
          </p>
        </>
      )}
      <h2>Recent bans</h2>
      <ErrorBox error={bans.error} />
      {bans.data && bans.data.items.length === 0 && <p class="muted">No ban in force.</p>}
      {bans.data && bans.data.items.length > 0 && (
        <Table label="Recent bans" head={['When', 'Player', 'Reason', 'Until']}>
          {bans.data.items.map((ban) => (
            <tr key={ban.banId}>
              <td>
                <Time value={ban.createdAt} />
              </td>
              <td>
                <a href={`#/players/${ban.uid}`}>{ban.username}</a>
              </td>
              <td>{ban.reason}</td>
              <td>{ban.until ? formatTime(ban.until) : 'permanent'}</td>
            </tr>
          ))}
        </Table>
      )}
      {bans.data?.nextCursor && (
        <p>
          <a href="#/bans">All bans</a>
        </p>
      )}
    </section>
  );
}
