import { useState } from 'preact/hooks';
import { admin, ok, typedNumber, type Schemas } from '../api';
import {
  ErrorBox,
  Field,
  formatTime,
  Loading,
  Notice,
  Pager,
  rating,
  SecretOnce,
  Table,
  Time,
  useAction,
  useCan,
  useLoad,
  usePagedList,
} from '../ui';

type SearchBy = 'username' | 'uuid' | 'uid';

/** POST /admin/players: the first step of a Net Token login (ONLINE players are created at their first login). */
function CreatePlayerForm() {
  const [username, setUsername] = useState('');
  const [uuid, setUuid] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [created, setCreated] = useState<{ uid: number; username: string } | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body: Schemas['CreatePlayerDto'] = { username: username.trim() };
      if (uuid.trim() !== '') body.uuid = uuid.trim();
      if (displayName.trim() !== '') body.displayName = displayName.trim();
      const player = await ok(admin.POST('/admin/players', { body }));
      setUsername('');
      setUuid('');
      setDisplayName('');
      setCreated(player);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Create a player">
      <h2>Create a player</h2>
      <p class="muted">For Net Token logins: create the player, then issue its Net Token on its page.</p>
      <div class="row wrap">
        <Field label="Username">
          <input
            name="new-username"
            value={username}
            required
            maxLength={32}
            onInput={(event) => setUsername(event.currentTarget.value)}
          />
        </Field>
        <Field label="UUID (optional)">
          <input name="new-uuid" value={uuid} onInput={(event) => setUuid(event.currentTarget.value)} />
        </Field>
        <Field label="Display name (optional)">
          <input
            name="new-display-name"
            value={displayName}
            maxLength={64}
            onInput={(event) => setDisplayName(event.currentTarget.value)}
          />
        </Field>
      </div>
      <button type="submit" disabled={action.busy}>
        Create
      </button>
      {created && (
        <Notice>
          Created <a href={`#/players/${created.uid}`}>{created.username}</a> (uid {created.uid})
        </Notice>
      )}
      <ErrorBox error={action.error} />
    </form>
  );
}

export function PlayersPage() {
  const can = useCan();
  const [by, setBy] = useState<SearchBy>('username');
  const [text, setText] = useState('');
  const [query, setQuery] = useState<{ by: SearchBy; text: string } | null>(null);
  const players = usePagedList(
    (cursor) =>
      query
        ? ok(
            admin.GET('/admin/players', {
              params: {
                query: {
                  ...(query.by === 'uid' ? { uid: typedNumber(query.text) } : { [query.by]: query.text }),
                  limit: 50,
                  cursor,
                },
              },
            }),
          )
        : Promise.resolve(null),
    [query?.by, query?.text],
  );
  const search = (event: Event) => {
    event.preventDefault();
    players.pager.onFirst();
    setQuery({ by, text: text.trim() });
  };
  return (
    <section>
      <h1>Players</h1>
      {can('players.create') && <CreatePlayerForm />}
      <form class="row wrap" onSubmit={search} role="search">
        <Field label="Find by">
          <select value={by} onChange={(event) => setBy(event.currentTarget.value as SearchBy)}>
            <option value="username">username prefix</option>
            <option value="uuid">UUID</option>
            <option value="uid">uid</option>
          </select>
        </Field>
        <Field label="Search">
          <input name="q" value={text} onInput={(event) => setText(event.currentTarget.value)} placeholder="Steve" />
        </Field>
        <button type="submit">Search</button>
      </form>
      <ErrorBox error={players.error} />
      <Loading loading={players.loading && query !== null} />
      {players.data && players.data.items.length === 0 && <p class="muted">No player found.</p>}
      {players.data && players.data.items.length > 0 && (
        <>
          <Table label="Players" head={['uid', 'Username', 'Display name', 'UUID', 'Online', 'Ban']}>
            {players.data.items.map((player) => (
              <tr key={player.uid}>
                <td>{player.uid}</td>
                <td>
                  <a href={`#/players/${player.uid}`}>{player.username}</a>
                </td>
                <td>{player.displayName}</td>
                <td class="mono">{player.uuid ?? '—'}</td>
                <td>{player.online ? `on ${player.online.serverName}` : 'offline'}</td>
                <td>
                  {player.ban
                    ? `banned${player.ban.until ? ` until ${formatTime(player.ban.until)}` : ''}: ${player.ban.reason}`
                    : player.banstate > 0
                      ? `warning ${player.banstate}`
                      : '—'}
                </td>
              </tr>
            ))}
          </Table>
          <Pager {...players.pager} />
        </>
      )}
    </section>
  );
}

/** `<input type="datetime-local" step="1">` gives YYYY-MM-DDTHH:mm or …:ss; the API wants seconds. */
const localDateTime = (value: string): string | undefined =>
  value === '' ? undefined : value.length === 16 ? `${value}:00` : value;

function BanForm({ uid, onDone }: { uid: number; onDone: (text: string) => void }) {
  const [reason, setReason] = useState('');
  const [until, setUntil] = useState('');
  const [message, setMessage] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body: Schemas['BanPlayerDto'] = {};
      if (reason !== '') body.reason = reason;
      if (message !== '') body.message = message;
      const end = localDateTime(until);
      if (end !== undefined) body.until = end;
      const ban = await ok(admin.POST('/admin/players/{uid}/ban', { params: { path: { uid } }, body }));
      onDone(`Banned ${ban.until ? `until ${formatTime(ban.until)}` : 'permanently'}; kick message: ${ban.message}`);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Ban">
      <h3>Ban</h3>
      <Field label="Reason">
        <input name="reason" value={reason} maxLength={512} onInput={(event) => setReason(event.currentTarget.value)} />
      </Field>
      <Field label="Until (service's local time; empty: permanent)">
        <input
          name="until"
          type="datetime-local"
          step={1}
          value={until}
          onInput={(event) => setUntil(event.currentTarget.value)}
        />
      </Field>
      <Field label="Kick message (empty: “You are banned: reason”)">
        <input
          name="message"
          value={message}
          maxLength={512}
          onInput={(event) => setMessage(event.currentTarget.value)}
        />
      </Field>
      <button type="submit" class="danger" disabled={action.busy}>
        Ban
      </button>
      <ErrorBox error={action.error} />
    </form>
  );
}

function BanstateForm({ uid, current, onDone }: { uid: number; current: number; onDone: (text: string) => void }) {
  const [value, setValue] = useState(String(current));
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const answer = await ok(
        admin.PUT('/admin/players/{uid}/banstate', { params: { path: { uid } }, body: { banstate: Number(value) } }),
      );
      onDone(`Warning level (banstate) is now ${answer.banstate}`);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Banstate">
      <h3>Warning level (banstate)</h3>
      <Field label="banstate (0: none)">
        <input
          name="banstate"
          type="number"
          min={0}
          step={1}
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
        />
      </Field>
      <button type="submit" disabled={action.busy}>
        Set
      </button>
      <ErrorBox error={action.error} />
    </form>
  );
}

export function PlayerPage({ uid }: { uid: string }) {
  const can = useCan();
  const profile = useLoad(
    () => ok(admin.GET('/admin/players/{uid}', { params: { path: { uid: typedNumber(uid) } } })),
    [uid],
  );
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const [netToken, setNetToken] = useState<string | null>(null);
  const finished = (text: string) => {
    setDone(text);
    profile.reload();
  };
  const p = profile.data;
  const activeBan = p?.bans.find((ban) => ban.active) ?? null;
  const live = p?.sessions.find((session) => session.live) ?? null;
  return (
    <section>
      <p>
        <a href="#/players">← Players</a>
      </p>
      <ErrorBox error={profile.error} />
      <Loading loading={profile.loading && !p} />
      {p && (
        <>
          <h1>
            {p.displayName}{' '}
            <span class="muted">
              ({p.username}, uid {p.uid})
            </span>
          </h1>
          <dl class="facts">
            <dt>UUID</dt>
            <dd class="mono">{p.uuid ?? '—'}</dd>
            <dt>Online</dt>
            <dd>
              {live
                ? `on ${live.serverName ?? live.serverID} since ${formatTime(live.createdAt)} (${live.mode}${live.proven ? '' : ', without proof'})`
                : 'offline'}
            </dd>
            <dt>Takeovers</dt>
            <dd class={p.takeovers.length > 0 ? 'warning' : undefined}>
              {p.takeovers.length === 0
                ? 'none'
                : `${p.takeovers.length === 20 ? '20 or more' : p.takeovers.length}; latest ${formatTime(p.takeovers[0].takenAt)} from ${p.takeovers[0].fromServerName ?? p.takeovers[0].fromServerID}`}
            </dd>
            <dt>Ban</dt>
            <dd class={activeBan ? 'warning' : undefined}>
              {activeBan
                ? `banned ${activeBan.until ? `until ${formatTime(activeBan.until)}` : 'permanently'}: ${activeBan.reason}`
                : 'not banned'}
            </dd>
            <dt>banstate</dt>
            <dd>{p.banstate}</dd>
            <dt>ATP</dt>
            <dd>{p.atp === null ? '—' : `${rating(p.atp)}${p.siteRank === null ? '' : ` (#${p.siteRank})`}`}</dd>
            <dt>wattHour</dt>
            <dd>{p.balance.wattHour ?? '—'}</dd>
            <dt>Created</dt>
            <dd>
              <Time value={p.createdAt} />
            </dd>
          </dl>
          {done && <Notice>{done}</Notice>}
          <ErrorBox error={action.error} />
          {netToken && <SecretOnce label="Net Token" value={netToken} onDone={() => setNetToken(null)} />}
          <div class="row wrap">
            {activeBan && can('players.ban') && (
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    await ok(admin.DELETE('/admin/players/{uid}/ban', { params: { path: { uid: p.uid } } }));
                    finished('Ban lifted');
                  })
                }
              >
                Unban
              </button>
            )}
            {can('players.net-token') && (
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    if (!confirm('Issue a new Net Token? The old one stops working.')) return;
                    const answer = await ok(
                      admin.POST('/admin/players/{uid}/net-token', { params: { path: { uid: p.uid } } }),
                    );
                    setNetToken(answer.netToken);
                    finished('New Net Token issued');
                  })
                }
              >
                New Net Token
              </button>
            )}
            {can('players.export') && (
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    const data = await ok(
                      admin.POST('/admin/players/{uid}/export', { params: { path: { uid: p.uid } } }),
                    );
                    const link = document.createElement('a');
                    link.href = URL.createObjectURL(
                      new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }),
                    );
                    link.download = `player-${p.uid}.json`;
                    link.click();
                    URL.revokeObjectURL(link.href);
                    finished('Exported: every row of the player, in the downloaded file');
                  })
                }
              >
                Export data
              </button>
            )}
            {can('players.erase') && (
              <button
                type="button"
                class="danger"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    // The service checks the name too (docs/decisions.md "Erasing a player").
                    const typed = prompt(
                      `Erase ${p.username} for good? Their plays, ranks, balance and sessions are deleted; this cannot be undone. Type the username to confirm:`,
                    );
                    if (typed === null) return;
                    const answer = await ok(
                      admin.POST('/admin/players/{uid}/erase', {
                        params: { path: { uid: p.uid } },
                        body: { confirm: typed },
                      }),
                    );
                    setDone(`Erased; the audit log calls the player ${answer.pseudonym}`);
                  })
                }
              >
                Erase player
              </button>
            )}
          </div>
          {can('players.ban') && (
            <div class="cards">
              <BanForm uid={p.uid} onDone={finished} />
              <BanstateForm key={p.banstate} uid={p.uid} current={p.banstate} onDone={finished} />
            </div>
          )}
          <h2>Sessions</h2>
          <Table label="Sessions" head={['Started', 'Server', 'Mode', 'State', 'Renewed']}>
            {p.sessions.map((session) => (
              <tr key={session.sessionId}>
                <td>
                  <Time value={session.createdAt} />
                </td>
                <td>{session.serverName ?? session.serverID ?? '—'}</td>
                <td>{session.proven ? `${session.mode} (proven)` : session.mode}</td>
                <td>
                  {session.live
                    ? 'live'
                    : session.loggedOutAt
                      ? `ended ${formatTime(session.loggedOutAt)} (${session.logoutReason ?? ''})`
                      : 'expired'}
                </td>
                <td>
                  <Time value={session.renewedAt} />
                </td>
              </tr>
            ))}
          </Table>
          {p.takeovers.length > 0 && (
            <>
              <h2>Takeovers</h2>
              <p class="muted">
                Sessions opened without proof (ONLINE) that a login with the player's Net Token or resume token took
                over; the server that held the session was told to kick the player.
              </p>
              <Table label="Takeovers" head={['When', 'Held by', 'Taken by', 'Proof']}>
                {p.takeovers.map((takeover, index) => (
                  <tr key={`${takeover.takenAt}-${index}`}>
                    <td>
                      <Time value={takeover.takenAt} />
                    </td>
                    <td>{takeover.fromServerName ?? takeover.fromServerID}</td>
                    <td>{takeover.toServerName ?? takeover.toServerID}</td>
                    <td>{takeover.proof === 'TOKEN' ? 'Net Token' : 'resume token'}</td>
                  </tr>
                ))}
              </Table>
            </>
          )}
          <h2>Bans</h2>
          {p.bans.length === 0 ? (
            <p class="muted">Never banned.</p>
          ) : (
            <Table label="Ban history" head={['Since', 'Reason', 'Message', 'Until', 'Lifted']}>
              {p.bans.map((ban) => (
                <tr key={ban.banId} class={ban.active ? 'active' : undefined}>
                  <td>
                    <Time value={ban.createdAt} />
                  </td>
                  <td>{ban.reason}</td>
                  <td>{ban.message}</td>
                  <td>{ban.until ? formatTime(ban.until) : 'permanent'}</td>
                  <td>{ban.active ? 'in force' : ban.liftedAt ? formatTime(ban.liftedAt) : 'expired'}</td>
                </tr>
              ))}
            </Table>
          )}
          <h2>
            Bests <span class="muted">({p.bestCount})</span>
          </h2>
          {p.bests.length > 0 && (
            <Table label="Bests" head={['Level', 'Acc', 'Rating', 'Rank']}>
              {p.bests.map((best) => (
                <tr key={best.levelId}>
                  <td>{best.levelId}</td>
                  <td>{best.acc}</td>
                  <td>{rating(best.rating)}</td>
                  <td>{best.trackRank ?? '—'}</td>
                </tr>
              ))}
            </Table>
          )}
          <h2>Balance history</h2>
          <pre class="json">{JSON.stringify(p.balance.history, null, 2)}</pre>
          <h2>Collections</h2>
          <p class="mono">{p.collections.length > 0 ? p.collections.join(', ') : '—'}</p>
          <h2>Options</h2>
          <pre class="json">{JSON.stringify(p.options, null, 2)}</pre>
          {can('audit.read') && (
            <p>
              <a href={`#/audit/player:${p.uid}`}>Audit log of this player</a>
            </p>
          )}
        </>
      )}
    </section>
  );
}
