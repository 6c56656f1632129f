import { useEffect, useState } from 'preact/hooks';
import { admin, downloadBackup, ok, type Schemas } from '../api';
import { ErrorBox, Field, Loading, Notice, useAction, useCan, useLoad } from '../ui';

type Overview = Schemas['AdminOverviewResponse'];

/*
 * The forms send every field the API stores. A field the form has not touched goes back exactly as
 * stored (null below: not edited): an <input> drops line breaks, and a list shown one a line cannot
 * hold an entry with one.
 */

function MaintenanceForm({ current }: { current: Overview['maintenance'] }) {
  const [enabled, setEnabled] = useState(current.enabled);
  const [message, setMessage] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const answer = await ok(
        admin.PUT('/admin/maintenance', { body: { enabled, message: message ?? current.message } }),
      );
      setDone(`Maintenance is ${answer.enabled ? 'on' : 'off'}`);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Maintenance">
      <h2>Maintenance</h2>
      <p class="muted">While on, server logins answer 401 MAINTENANCE with the message.</p>
      <label class="check">
        <input
          type="checkbox"
          name="enabled"
          checked={enabled}
          onChange={(event) => setEnabled(event.currentTarget.checked)}
        />{' '}
        Maintenance on
      </label>
      <Field label="Message">
        <input
          name="message"
          value={message ?? current.message}
          onInput={(event) => setMessage(event.currentTarget.value)}
        />
      </Field>
      <button type="submit" disabled={action.busy}>
        Save
      </button>
      {done && <Notice>{done}</Notice>}
      <ErrorBox error={action.error} />
    </form>
  );
}

/** One SHA a line, each exactly as typed (a SHA may hold a space); empty lines are dropped. */
const shaLines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
    .filter((line) => line !== '');

function PolicyForm({ current }: { current: Overview['pluginPolicy'] }) {
  const stored = {
    minPluginVersion: current?.minPluginVersion ?? 0,
    latestPluginVersion: current?.latestPluginVersion ?? 0,
    allowedPluginSHAs: current?.allowedPluginSHAs ?? [],
    downUrl: current?.downUrl ?? '',
  };
  const [min, setMin] = useState<string | null>(null);
  const [latest, setLatest] = useState<string | null>(null);
  const [shas, setShas] = useState<string | null>(null);
  const [downUrl, setDownUrl] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = {
        minPluginVersion: min === null ? stored.minPluginVersion : Number(min),
        latestPluginVersion: latest === null ? stored.latestPluginVersion : Number(latest),
        allowedPluginSHAs: shas === null ? stored.allowedPluginSHAs : shaLines(shas),
        downUrl: downUrl ?? stored.downUrl,
      };
      const answer = await ok(admin.PUT('/admin/plugin-policy', { body }));
      setDone(
        `Plugin policy stored: versions ${answer.minPluginVersion}–${answer.latestPluginVersion}, ${answer.allowedPluginSHAs.length} allowed builds`,
      );
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Plugin policy">
      <h2>Plugin policy</h2>
      <p class="muted">
        {current ? 'In force:' : 'No policy set: every plugin may log in.'} Logins below the minimum version, or of a
        build not listed (when the list is not empty), answer 426.
      </p>
      <div class="row wrap">
        <Field label="Minimum plugin version">
          <input
            name="minPluginVersion"
            type="number"
            min={0}
            value={min ?? String(stored.minPluginVersion)}
            onInput={(event) => setMin(event.currentTarget.value)}
          />
        </Field>
        <Field label="Latest plugin version">
          <input
            name="latestPluginVersion"
            type="number"
            min={0}
            value={latest ?? String(stored.latestPluginVersion)}
            onInput={(event) => setLatest(event.currentTarget.value)}
          />
        </Field>
      </div>
      <Field label="Allowed plugin SHAs (one a line; empty: any build)">
        <textarea
          name="allowedPluginSHAs"
          rows={4}
          spellcheck={false}
          value={shas ?? stored.allowedPluginSHAs.join('\n')}
          onInput={(event) => setShas(event.currentTarget.value)}
        />
      </Field>
      <Field label="Download URL of the latest plugin">
        <input
          name="downUrl"
          value={downUrl ?? stored.downUrl}
          onInput={(event) => setDownUrl(event.currentTarget.value)}
        />
      </Field>
      <button type="submit" disabled={action.busy}>
        Save
      </button>
      {done && <Notice>{done}</Notice>}
      <ErrorBox error={action.error} />
    </form>
  );
}

type Handover = Overview['sessionHandover'];
const LOGIN_MODES: Handover['modes'] = ['ONLINE', 'TOKEN', 'OFFLINE_REFRESH'];

/** `eu=1,2,3` a line ⇄ the groups; a line that does not parse goes as typed, for the API to refuse. */
const groupLines = (groups: Handover['groups']): string =>
  groups.map((group) => `${group.name}=${group.serverIDs.join(',')}`).join('\n');
const parseGroups = (text: string): Handover['groups'] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const [name, ids = ''] = line.split('=');
      return {
        name: name.trim(),
        serverIDs: ids
          .split(',')
          .map((id) => id.trim())
          .filter((id) => id !== '')
          .map(Number),
      };
    });

function HandoverForm({ current }: { current: Handover }) {
  const [mode, setMode] = useState(current.mode);
  const [groups, setGroups] = useState<string | null>(null);
  const [modes, setModes] = useState(current.modes);
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = {
        mode,
        groups: mode === 'groups' ? (groups === null ? current.groups : parseGroups(groups)) : [],
        modes,
      };
      const answer = await ok(admin.PUT('/admin/session-handover', { body }));
      setDone(`Session handover: ${answer.mode}${answer.mode === 'groups' ? ` (${answer.groups.length} groups)` : ''}`);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Session handover">
      <h2>Session handover</h2>
      <p class="muted">
        Whether a player's login through another server of the same network takes over a live session (off: 409, as the
        spec has it).
      </p>
      <Field label="Mode">
        <select
          name="handover-mode"
          value={mode}
          onChange={(event) => setMode(event.currentTarget.value as Handover['mode'])}
        >
          <option value="off">off</option>
          <option value="all">all servers are one network</option>
          <option value="groups">groups of servers</option>
        </select>
      </Field>
      {mode === 'groups' && (
        <Field label="Groups (one a line: name=serverID,serverID,…)">
          <textarea
            name="handover-groups"
            rows={4}
            spellcheck={false}
            value={groups ?? groupLines(current.groups)}
            onInput={(event) => setGroups(event.currentTarget.value)}
          />
        </Field>
      )}
      <fieldset>
        <legend>Login modes that may take a session over</legend>
        {LOGIN_MODES.map((loginMode) => (
          <label class="check" key={loginMode}>
            <input
              type="checkbox"
              checked={modes.includes(loginMode)}
              onChange={(event) =>
                setModes(
                  event.currentTarget.checked
                    ? LOGIN_MODES.filter((m) => m === loginMode || modes.includes(m))
                    : modes.filter((m) => m !== loginMode),
                )
              }
            />{' '}
            {loginMode}
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={action.busy}>
        Save
      </button>
      {done && <Notice>{done}</Notice>}
      <ErrorBox error={action.error} />
    </form>
  );
}

function RecomputeCard() {
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const run = () =>
    action.run(async () => {
      if (!confirm('Recompute every best and ATP from the stored plays? On a large network this takes minutes.'))
        return;
      const answer = await ok(admin.POST('/admin/ratings/recompute'));
      setDone(
        `Recomputed: ${Object.entries(answer)
          .map(([key, value]) => `${key} ${value}`)
          .join(', ')}`,
      );
    });
  return (
    <div class="card" role="group" aria-label="Ratings">
      <h2>Ratings</h2>
      <p class="muted">
        Rebuilds every player's bests and ATP from the stored plays (after a change of chart constants).
      </p>
      <button type="button" disabled={action.busy} onClick={() => void run()}>
        Recompute ratings
      </button>
      {done && <Notice>{done}</Notice>}
      <ErrorBox error={action.error} />
    </div>
  );
}

interface Backup {
  filename: string;
  bytes: number;
  sha256: string;
  /** An object URL of the file, for the Save link; revoked when another backup replaces it or the page goes. */
  url: string;
}

/**
 * POST /admin/database/backup (owner only): the embedded database as a tarball, shown by name, size
 * and SHA-256 with a link to save it. On PostgreSQL the service answers 409 naming pg_dump, shown as is.
 */
function BackupCard() {
  const [backup, setBackup] = useState<Backup | null>(null);
  const action = useAction();
  useEffect(
    () => () => {
      if (backup) URL.revokeObjectURL(backup.url);
    },
    [backup],
  );
  const run = () =>
    action.run(async () => {
      setBackup(null);
      const file = await downloadBackup();
      setBackup({
        filename: file.filename,
        bytes: file.blob.size,
        sha256: file.headers.get('X-Backup-SHA256') ?? '',
        url: URL.createObjectURL(file.blob),
      });
    });
  return (
    <div class="card" role="group" aria-label="Database backup">
      <h2>Database backup</h2>
      <p class="muted">
        A consistent copy of the embedded database, taken while the service serves;{' '}
        <code>npm run database -- restore</code> makes a new data dir of it (docs/operations.md &quot;Backup and
        restore&quot;). It holds every account: keep it as safe as the data dir. On PostgreSQL, back up with pg_dump.
      </p>
      <button type="button" disabled={action.busy} onClick={() => void run()}>
        Take a backup
      </button>
      {backup && (
        <Notice>
          Backup {backup.filename}: {backup.bytes} bytes, SHA-256 <code>{backup.sha256}</code>.{' '}
          <a href={backup.url} download={backup.filename}>
            Save {backup.filename}
          </a>
        </Notice>
      )}
      <ErrorBox error={action.error} />
    </div>
  );
}

export function SettingsPage() {
  const can = useCan();
  const overview = useLoad(() => ok(admin.GET('/admin/overview')), []);
  return (
    <section>
      <h1>Network settings</h1>
      <ErrorBox error={overview.error} />
      <Loading loading={overview.loading} />
      <div class="cards">
        {overview.data && can('settings.write') && (
          <>
            <MaintenanceForm current={overview.data.maintenance} />
            <PolicyForm current={overview.data.pluginPolicy} />
            <HandoverForm current={overview.data.sessionHandover} />
          </>
        )}
        {can('ratings.recompute') && <RecomputeCard />}
        {can('database.backup') && <BackupCard />}
      </div>
    </section>
  );
}
