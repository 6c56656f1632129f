import { useState } from 'preact/hooks';
import { admin, ok, type Schemas } from '../api';
import { ErrorBox, Field, Loading, Notice, Pager, SecretOnce, Table, useAction, usePagedList } from '../ui';

type ApiKey = Schemas['ApiKeyResponse'];
type Scope = ApiKey['scopes'][number];

const SCOPES: Array<[Scope, string]> = [
  ['read:boards', 'boards, charts, first places'],
  ['read:players', 'player profiles, name search'],
];

/** The scope checkboxes: at least one must stay ticked (the API refuses none). */
function ScopePicker({ scopes, onChange }: { scopes: Scope[]; onChange: (scopes: Scope[]) => void }) {
  return (
    <fieldset class="row wrap">
      <legend>Scopes</legend>
      {SCOPES.map(([scope, what]) => (
        <label key={scope}>
          <input
            type="checkbox"
            name={scope}
            aria-label={scope}
            checked={scopes.includes(scope)}
            onChange={(event) =>
              onChange(
                event.currentTarget.checked
                  ? [...scopes, scope].sort()
                  : scopes.filter((candidate) => candidate !== scope),
              )
            }
          />{' '}
          {scope} <span class="muted">({what})</span>
        </label>
      ))}
    </fieldset>
  );
}

function CreateForm({ onCreated }: { onCreated: (key: Schemas['CreatedApiKeyResponse']) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['read:boards']);
  const [limit, setLimit] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await ok(
        admin.POST('/admin/api-keys', {
          body: { name, scopes, ...(limit.trim() !== '' ? { rateLimit: Number(limit) } : {}) },
        }),
      );
      setName('');
      setLimit('');
      onCreated(created);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Create an API key">
      <h2>Create a key</h2>
      <p class="muted">
        One key per integration (a website, a Discord bot, a lobby plugin), for the public read API at /public/v1. The
        key is shown once; only its SHA-256 is kept.
      </p>
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
        <Field label="Calls a minute (empty: the default)">
          <input
            name="rateLimit"
            type="number"
            min={1}
            max={1000000}
            value={limit}
            onInput={(event) => setLimit(event.currentTarget.value)}
          />
        </Field>
      </div>
      <ScopePicker scopes={scopes} onChange={setScopes} />
      <button type="submit" disabled={action.busy || scopes.length === 0}>
        Create
      </button>
      <ErrorBox error={action.error} />
    </form>
  );
}

/** One key's row: its scopes and limit can be changed in place; a revoked key is only shown. */
function KeyRow({
  apiKey,
  busy,
  onSave,
  onRevoke,
}: {
  apiKey: ApiKey;
  busy: boolean;
  onSave: (changes: { scopes: Scope[]; rateLimit: number | null }) => void;
  onRevoke: () => void;
}) {
  const [scopes, setScopes] = useState(apiKey.scopes);
  const [limit, setLimit] = useState(apiKey.rateLimit === null ? '' : String(apiKey.rateLimit));
  const live = apiKey.revokedAt === null;
  const changed =
    scopes.join(' ') !== apiKey.scopes.join(' ') ||
    limit !== (apiKey.rateLimit === null ? '' : String(apiKey.rateLimit));
  return (
    <tr>
      <td>{apiKey.id}</td>
      <td>{apiKey.name}</td>
      <td>{live ? <ScopePicker scopes={scopes} onChange={setScopes} /> : apiKey.scopes.join(' ')}</td>
      <td>
        {live ? (
          <input
            aria-label={`Calls a minute of ${apiKey.name}`}
            type="number"
            min={1}
            max={1000000}
            placeholder={`default (${apiKey.effectiveRateLimit})`}
            value={limit}
            onInput={(event) => setLimit(event.currentTarget.value)}
          />
        ) : (
          apiKey.effectiveRateLimit
        )}
      </td>
      <td>{apiKey.createdAt}</td>
      <td>{apiKey.lastUsedAt ?? 'never'}</td>
      <td>{live ? <span class="badge on">live</span> : <span class="badge off">revoked {apiKey.revokedAt}</span>}</td>
      <td>
        {live && (
          <>
            <button
              type="button"
              class="secondary"
              disabled={busy || !changed || scopes.length === 0}
              onClick={() => onSave({ scopes, rateLimit: limit.trim() === '' ? null : Number(limit) })}
            >
              Save
            </button>
            <button type="button" class="danger" disabled={busy} onClick={onRevoke}>
              Revoke
            </button>
          </>
        )}
      </td>
    </tr>
  );
}

export function ApiKeysPage() {
  const keys = usePagedList(
    (cursor) => ok(admin.GET('/admin/api-keys', { params: { query: { limit: 100, cursor } } })),
    [],
  );
  const action = useAction();
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const save = (apiKey: ApiKey, changes: { scopes: Scope[]; rateLimit: number | null }) =>
    action.run(async () => {
      await ok(admin.PATCH('/admin/api-keys/{id}', { params: { path: { id: apiKey.id } }, body: changes }));
      setDone(`Saved ${apiKey.name}: every instance applies it from the next call.`);
      keys.reload();
    });
  const revoke = (apiKey: ApiKey) =>
    action.run(async () => {
      if (!confirm(`Revoke ${apiKey.name}? Every call with it is refused from now on; this cannot be undone.`)) return;
      await ok(admin.DELETE('/admin/api-keys/{id}', { params: { path: { id: apiKey.id } } }));
      setDone(`Revoked ${apiKey.name}.`);
      keys.reload();
    });
  return (
    <section>
      <h1>API keys</h1>
      {done && <Notice>{done}</Notice>}
      {secret && <SecretOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />}
      <ErrorBox error={action.error} />
      <CreateForm
        onCreated={(created) => {
          setDone(`Created ${created.name} (id ${created.id}): give the key to the integration now.`);
          setSecret({ label: `API key of ${created.name}`, value: created.key });
          keys.reload();
        }}
      />
      <div class="row wrap">
        <button type="button" class="secondary" onClick={keys.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={keys.error} />
      <Loading loading={keys.loading && !keys.data} />
      {keys.data && (
        <Table label="API keys" head={['ID', 'Name', 'Scopes', 'Calls a minute', 'Created', 'Last used', 'State', '']}>
          {keys.data.items.map((apiKey) => (
            <KeyRow
              key={`${apiKey.id}:${apiKey.scopes.join(' ')}:${apiKey.rateLimit ?? ''}:${apiKey.revokedAt ?? ''}`}
              apiKey={apiKey}
              busy={action.busy}
              onSave={(changes) => void save(apiKey, changes)}
              onRevoke={() => void revoke(apiKey)}
            />
          ))}
        </Table>
      )}
      <Pager {...keys.pager} />
    </section>
  );
}
