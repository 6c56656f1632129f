import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorBox, Field, Loading, Notice, useAction, useLoad } from '../ui';
import type { Overview } from './overview';

function MaintenanceForm({ current }: { current: Overview['maintenance'] }) {
  const [enabled, setEnabled] = useState(current.enabled);
  const [message, setMessage] = useState(current.message);
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const answer = await api<Overview['maintenance']>('PUT', '/admin/maintenance', { body: { enabled, message } });
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
          value={message}
          maxLength={512}
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

function PolicyForm({ current }: { current: Overview['pluginPolicy'] }) {
  const [min, setMin] = useState(String(current?.minPluginVersion ?? 0));
  const [latest, setLatest] = useState(String(current?.latestPluginVersion ?? 0));
  const [shas, setShas] = useState((current?.allowedPluginSHAs ?? []).join('\n'));
  const [downUrl, setDownUrl] = useState(current?.downUrl ?? '');
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body = {
        minPluginVersion: Number(min),
        latestPluginVersion: Number(latest),
        allowedPluginSHAs: shas
          .split(/\s+/)
          .map((sha) => sha.trim())
          .filter((sha) => sha !== ''),
        downUrl,
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
            value={min}
            onInput={(event) => setMin(event.currentTarget.value)}
          />
        </Field>
        <Field label="Latest plugin version">
          <input
            name="latestPluginVersion"
            type="number"
            min={0}
            value={latest}
            onInput={(event) => setLatest(event.currentTarget.value)}
          />
        </Field>
      </div>
      <Field label="Allowed plugin SHAs (one a line; empty: any build)">
        <textarea
          name="allowedPluginSHAs"
          rows={4}
          spellcheck={false}
          value={shas}
          onInput={(event) => setShas(event.currentTarget.value)}
        />
      </Field>
      <Field label="Download URL of the latest plugin">
        <input name="downUrl" value={downUrl} onInput={(event) => setDownUrl(event.currentTarget.value)} />
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
