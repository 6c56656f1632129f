import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, Field, Loading, Notice, useAction, useLoad } from '../ui';
import type { Overview } from './overview';

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
      const answer = await api<Overview['maintenance']>('PUT', '/admin/maintenance', {
        body: { enabled, message: message ?? current.message },
      });
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
      const answer = await api<NonNullable<Overview['pluginPolicy']>>('PUT', '/admin/plugin-policy', { body });
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

export function SettingsPage() {
  const overview = useLoad(() => api<Overview>('GET', '/admin/overview'), []);
  return (
    <section>
      <h1>Maintenance & plugin policy</h1>
      <ErrorBox error={overview.error} />
      <Loading loading={overview.loading} />
      {overview.data && (
        <div class="cards">
          <MaintenanceForm current={overview.data.maintenance} />
          <PolicyForm current={overview.data.pluginPolicy} />
        </div>
      )}
    </section>
  );
}
