import { useState } from 'preact/hooks';
import { api, Page } from '../api';
import { ErrorBox, Field, Loading, Notice, Pager, Table, Time, useAction, useLoad } from '../ui';

interface StaffAccount {
  id: number;
  name: string;
  role: string;
  disabled: boolean;
  createdAt: string;
  passwordChangedAt: string;
  lastSignInAt: string | null;
  tokens: number;
  secondFactor: boolean;
}

interface StaffDetail extends StaffAccount {
  tokenList: Array<{ id: number; name: string; role: string; createdAt: string; lastUsedAt: string | null }>;
  sessions: Array<{ id: number; createdAt: string; lastSeenAt: string; sourceAddress: string | null }>;
}

const ROLES = ['read-only', 'support', 'moderator', 'admin', 'owner'];

function AddForm({ onAdded }: { onAdded: (account: StaffAccount) => void }) {
  const [name, setName] = useState('');
  const [role, setRole] = useState('moderator');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const account = await api<StaffAccount>('POST', '/admin/staff', { body: { name, role, password } });
      setName('');
      setPassword('');
      onAdded(account);
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Add a staff member">
      <h2>Add a staff member</h2>
      <div class="row wrap">
        <Field label="Name">
          <input
            name="staff-name"
            value={name}
            required
            pattern="[a-z0-9][a-z0-9._\-]{1,31}"
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </Field>
        <Field label="Role">
          <select name="staff-role" value={role} onChange={(event) => setRole(event.currentTarget.value)}>
            {ROLES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </Field>
        <Field label="First password (15 characters or more)">
          <input
            type="password"
            name="staff-password"
            autoComplete="new-password"
            value={password}
            required
            minLength={15}
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </Field>
      </div>
      <button type="submit" disabled={action.busy}>
        Add
      </button>
      <ErrorBox error={action.error} />
    </form>
  );
}

/** Owners only: every staff account; add, change role, disable or enable, reset a password, delete. */
export function StaffPage() {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const staff = useLoad(
    () => api<Page<StaffAccount>>('GET', '/admin/staff', { query: { limit: 100, cursor } }),
    [cursor],
  );
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const change = (account: StaffAccount, body: Record<string, unknown>, text: string) =>
    action.run(async () => {
      await api('PATCH', `/admin/staff/${account.id}`, { body });
      setDone(text);
      staff.reload();
    });
  const resetPassword = (account: StaffAccount) => {
    const password = prompt(`New password for ${account.name} (15 characters or more; their sessions end):`);
    if (password === null) return;
    void change(account, { password }, `Reset the password of ${account.name}`);
  };
  const remove = (account: StaffAccount) =>
    action.run(async () => {
      if (
        !confirm(
          `Delete ${account.name}? Their sessions end and their tokens stop working; the audit log keeps their name.`,
        )
      )
        return;
      await api('DELETE', `/admin/staff/${account.id}`);
      setDone(`Deleted ${account.name}`);
      staff.reload();
    });
  return (
    <section>
      <h1>Staff</h1>
      {done && <Notice>{done}</Notice>}
      <ErrorBox error={action.error} />
      <AddForm
        onAdded={(account) => {
          setDone(`Added ${account.name} (${account.role}): tell them the password; they change it under My account.`);
          staff.reload();
        }}
      />
      <ErrorBox error={staff.error} />
      <Loading loading={staff.loading && !staff.data} />
      {staff.data && (
        <Table label="Staff" head={['Name', 'Role', 'State', 'Last sign-in', 'Tokens', '']}>
          {staff.data.items.map((account) => (
            <tr key={account.id}>
              <td>
                <a href={`#/staff/${account.id}`}>{account.name}</a>
              </td>
              <td>
                <select
                  aria-label={`Role of ${account.name}`}
                  value={account.role}
                  disabled={action.busy}
                  onChange={(event) =>
                    void change(
                      account,
                      { role: event.currentTarget.value },
                      `${account.name} is now ${event.currentTarget.value}`,
                    )
                  }
                >
                  {ROLES.map((option) => (
                    <option key={option} value={option}>
                      {option}
                    </option>
                  ))}
                </select>
              </td>
              <td>
                <span class={account.disabled ? 'badge off' : 'badge on'}>
                  {account.disabled ? 'disabled' : 'active'}
                </span>
              </td>
              <td>{account.lastSignInAt ? <Time value={account.lastSignInAt} /> : 'never'}</td>
              <td>{account.tokens}</td>
              <td>
                <button
                  type="button"
                  class="secondary"
                  disabled={action.busy}
                  onClick={() =>
                    void change(
                      account,
                      { disabled: !account.disabled },
                      account.disabled ? `Enabled ${account.name}` : `Disabled ${account.name}`,
                    )
                  }
                >
                  {account.disabled ? 'Enable' : 'Disable'}
                </button>
                <button type="button" class="secondary" disabled={action.busy} onClick={() => resetPassword(account)}>
                  Reset password
                </button>
                <button type="button" class="danger" disabled={action.busy} onClick={() => void remove(account)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager
        cursor={staff.data?.nextCursor ?? null}
        atFirst={cursors.length === 0}
        onFirst={() => setCursors([])}
        onNext={() => staff.data?.nextCursor && setCursors([...cursors, staff.data.nextCursor])}
      />
    </section>
  );
}

/** One staff account: its personal API tokens (revocable) and live sessions. */
export function StaffMemberPage({ id }: { id: string }) {
  const account = useLoad(() => api<StaffDetail>('GET', `/admin/staff/${encodeURIComponent(id)}`), [id]);
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const a = account.data;
  return (
    <section>
      <p>
        <a href="#/staff">← Staff</a>
      </p>
      <ErrorBox error={account.error} />
      <Loading loading={account.loading && !a} />
      {a && (
        <>
          <h1>
            {a.name} <span class="muted">({a.role})</span>
          </h1>
          <dl class="facts">
            <dt>State</dt>
            <dd>{a.disabled ? 'disabled' : 'active'}</dd>
            <dt>Created</dt>
            <dd>
              <Time value={a.createdAt} />
            </dd>
            <dt>Password changed</dt>
            <dd>
              <Time value={a.passwordChangedAt} />
            </dd>
            <dt>Last sign-in</dt>
            <dd>{a.lastSignInAt ? <Time value={a.lastSignInAt} /> : 'never'}</dd>
            <dt>Second factor</dt>
            <dd>
              {a.secondFactor ? 'authenticator app' : 'none'}{' '}
              {a.secondFactor && (
                <button
                  type="button"
                  class="secondary"
                  disabled={action.busy}
                  onClick={() =>
                    void action.run(async () => {
                      if (!confirm(`Turn off the second factor of ${a.name}? Only if they lost their authenticator.`))
                        return;
                      await api('PATCH', `/admin/staff/${a.id}`, { body: { secondFactor: false } });
                      setDone(`${a.name} signs in with the password only, until they set up a second factor again`);
                      account.reload();
                    })
                  }
                >
                  Turn off
                </button>
              )}
            </dd>
          </dl>
          {done && <Notice>{done}</Notice>}
          <ErrorBox error={action.error} />
          <h2>API tokens</h2>
          {a.tokenList.length === 0 ? (
            <p class="muted">No token.</p>
          ) : (
            <Table label="API tokens" head={['Name', 'Role', 'Created', 'Last used', '']}>
              {a.tokenList.map((token) => (
                <tr key={token.id}>
                  <td>{token.name}</td>
                  <td>{token.role}</td>
                  <td>
                    <Time value={token.createdAt} />
                  </td>
                  <td>{token.lastUsedAt ? <Time value={token.lastUsedAt} /> : 'never'}</td>
                  <td>
                    <button
                      type="button"
                      class="secondary"
                      disabled={action.busy}
                      onClick={() =>
                        void action.run(async () => {
                          if (!confirm(`Revoke ${token.name} of ${a.name}?`)) return;
                          await api('DELETE', `/admin/staff/${a.id}/tokens/${token.id}`);
                          setDone(`Revoked ${token.name}`);
                          account.reload();
                        })
                      }
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </Table>
          )}
          <h2>Sessions</h2>
          {a.sessions.length === 0 ? (
            <p class="muted">Not signed in.</p>
          ) : (
            <Table label="Sessions" head={['Signed in', 'Last request', 'From']}>
              {a.sessions.map((session) => (
                <tr key={session.id}>
                  <td>
                    <Time value={session.createdAt} />
                  </td>
                  <td>
                    <Time value={session.lastSeenAt} />
                  </td>
                  <td class="mono">{session.sourceAddress ?? '—'}</td>
                </tr>
              ))}
            </Table>
          )}
          <p>
            <a href={`#/audit/staff:${a.id}`}>Audit log of this account</a>
          </p>
        </>
      )}
    </section>
  );
}
