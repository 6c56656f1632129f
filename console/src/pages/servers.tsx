import { useState } from 'preact/hooks';
import { admin, ok, type Schemas } from '../api';
import {
  ErrorBox,
  Field,
  formatTime,
  Loading,
  Notice,
  Pager,
  SecretOnce,
  Table,
  useAction,
  useCan,
  usePagedList,
} from '../ui';

type Server = Schemas['AdminServerResponse'];

/** Player-session conflicts of the last 24 h; a server whose sessions are taken over or keep others out claims players it does not have. */
function Conflicts({ counts }: { counts: Server['sessionConflicts24h'] }) {
  const text = `taken over ${counts.takenOver} · kept out ${counts.keptOut} · ONLINE refused ${counts.onlineRefused}`;
  return counts.takenOver + counts.keptOut + counts.onlineRefused === 0 ? (
    <span class="muted">—</span>
  ) : (
    <span class={counts.takenOver + counts.keptOut > 0 ? 'warning' : undefined}>{text}</span>
  );
}

type Online = '' | 'true' | 'false';

function RegisterForm({ onRegistered }: { onRegistered: (serverID: number, name: string, token: string) => void }) {
  const [name, setName] = useState('');
  const [country, setCountry] = useState('');
  const [ip, setIp] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await ok(
        admin.POST('/admin/servers', { body: { name, country, ...(ip.trim() !== '' ? { ip: ip.trim() } : {}) } }),
      );
      setName('');
      setIp('');
      onRegistered(created.serverID, created.serverName, created.bootstrapToken);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Register a server">
      <h2>Register a server</h2>
      <div class="row wrap">
        <Field label="Name">
          <input
            name="name"
            value={name}
            required
            maxLength={64}
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </Field>
        <Field label="Country or region">
          <input
            name="country"
            value={country}
            required
            maxLength={64}
            onInput={(event) => setCountry(event.currentTarget.value)}
          />
        </Field>
        <Field label="Public IP (optional)">
          <input name="ip" value={ip} onInput={(event) => setIp(event.currentTarget.value)} />
        </Field>
      </div>
      <button type="submit" disabled={action.busy}>
        Register
      </button>
      <ErrorBox error={action.error} />
    </form>
  );
}

export function ServersPage() {
  const can = useCan();
  const [online, setOnline] = useState<Online>('');
  const servers = usePagedList(
    (cursor) =>
      ok(
        admin.GET('/admin/servers', {
          params: { query: { online: online === '' ? undefined : online === 'true', limit: 100, cursor } },
        }),
      ),
    [online],
  );
  const action = useAction();
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const rotate = (server: Server) =>
    action.run(async () => {
      if (
        !confirm(`Rotate the bootstrap token of ${server.serverName}? The old token stops working; live sessions stay.`)
      )
        return;
      const answer = await ok(
        admin.POST('/admin/servers/{serverID}/bootstrap-token', { params: { path: { serverID: server.serverID } } }),
      );
      setDone(`New bootstrap token of ${server.serverName} (serverID ${server.serverID})`);
      setSecret({ label: `Bootstrap token of ${server.serverName}`, value: answer.bootstrapToken });
    });
  const logOut = (server: Server) =>
    action.run(async () => {
      if (
        !confirm(
          `Log ${server.serverName} out? Its players are logged out and its WebSocket closes; it logs in again with its bootstrap token (rotate that first to keep it out).`,
        )
      )
        return;
      const answer = await ok(
        admin.POST('/admin/servers/{serverID}/logout', { params: { path: { serverID: server.serverID } } }),
      );
      setDone(
        answer.endedSessions > 0 ? `Logged ${server.serverName} out.` : `${server.serverName} was not logged in.`,
      );
      servers.reload();
    });
  return (
    <section>
      <h1>Servers</h1>
      {done && <Notice>{done}</Notice>}
      {secret && <SecretOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />}
      <ErrorBox error={action.error} />
      {can('servers.manage') && (
        <RegisterForm
          onRegistered={(serverID, name, token) => {
            setDone(`Registered ${name} as serverID ${serverID}: put the bootstrap token in its plugin configuration.`);
            setSecret({ label: `Bootstrap token of ${name}`, value: token });
            servers.reload();
          }}
        />
      )}
      <div class="row wrap">
        <Field label="Show">
          <select value={online} onChange={(event) => setOnline(event.currentTarget.value as Online)}>
            <option value="">all servers</option>
            <option value="true">online</option>
            <option value="false">offline</option>
          </select>
        </Field>
        <button type="button" class="secondary" onClick={servers.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={servers.error} />
      <Loading loading={servers.loading && !servers.data} />
      {servers.data && (
        <Table
          label="Servers"
          head={[
            'ID',
            'Name',
            'Country',
            'State',
            'Players',
            'Plugin',
            'Address',
            'Last login',
            'WebSocket',
            'Conflicts (24 h)',
            '',
          ]}
        >
          {servers.data.items.map((server) => (
            <tr key={server.serverID}>
              <td>{server.serverID}</td>
              <td>{server.serverName}</td>
              <td>{server.country}</td>
              <td>
                <span class={server.online ? 'badge on' : 'badge off'}>{server.online ? 'online' : 'offline'}</span>
              </td>
              <td>{server.playersOnline}</td>
              <td>{server.pluginVersion ?? '—'}</td>
              <td class="mono">{server.ip ?? server.address ?? '—'}</td>
              <td class="nowrap">{server.lastLogin ? formatTime(server.lastLogin) : 'never'}</td>
              <td>{server.realtime ? `since ${formatTime(server.realtime.connectedAt)}` : '—'}</td>
              <td>
                <Conflicts counts={server.sessionConflicts24h} />
              </td>
              <td>
                {can('servers.manage') && (
                  <button type="button" class="secondary" disabled={action.busy} onClick={() => void rotate(server)}>
                    Rotate token
                  </button>
                )}
                {server.online && can('servers.logout') && (
                  <button type="button" class="secondary" disabled={action.busy} onClick={() => void logOut(server)}>
                    Log out
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager {...servers.pager} />
    </section>
  );
}
