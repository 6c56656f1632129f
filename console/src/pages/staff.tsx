import { useContext, useState } from 'preact/hooks';
import { typedNumber, admin, ok, type Schemas } from '../api';
import {
  ErrorBox,
  Field,
  Loading,
  Notice,
  Pager,
  SessionContext,
  Table,
  Time,
  useAction,
  useLoad,
  usePagedList,
} from '../ui';

type StaffAccount = Schemas['StaffAccountResponse'];
type Role = StaffAccount['role'];

const ROLES: Role[] = ['read-only', 'support', 'moderator', 'admin', 'owner'];

function AddForm({ onAdded }: { onAdded: (account: StaffAccount) => void }) {
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('moderator');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const account = await ok(admin.POST('/admin/staff', { body: { name, role, password } }));
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
          <select name="staff-role" value={role} onChange={(event) => setRole(event.currentTarget.value as Role)}>
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
  const me = useContext(SessionContext);
  // Resetting a password or turning a second factor off: not on one's own account (My account
  // does that) and not with a personal API token; the API answers 403 to both.
  const mayReset = (account: StaffAccount) => me?.credential !== 'token' && me?.accountId !== account.id;
  const staff = usePagedList(
    (cursor) => ok(admin.GET('/admin/staff', { params: { query: { limit: 100, cursor } } })),
    [],
  );
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const change = (account: StaffAccount, body: Schemas['UpdateStaffDto'], text: string) =>
    action.run(async () => {
      await ok(admin.PATCH('/admin/staff/{id}', { params: { path: { id: account.id } }, body }));
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
      await ok(admin.DELETE('/admin/staff/{id}', { params: { path: { id: account.id } } }));
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
                      { role: event.currentTarget.value as Role },
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
                {mayReset(account) ? (
                  <button type="button" class="secondary" disabled={action.busy} onClick={() => resetPassword(account)}>
                    Reset password
                  </button>
                ) : me?.accountId === account.id ? (
                  <a class="row-link" href="#/account" title="Your own password is changed under My account">
                    My account
                  </a>
                ) : null}
                <button type="button" class="danger" disabled={action.busy} onClick={() => void remove(account)}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager {...staff.pager} />
    </section>
  );
}

/** One staff account: its personal API tokens (revocable) and live sessions. */
export function StaffMemberPage({ id }: { id: string }) {
  const me = useContext(SessionContext);
  const account = useLoad(
    () => ok(admin.GET('/admin/staff/{id}', { params: { path: { id: typedNumber(id) } } })),
    [id],
  );
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
              {a.secondFactor && me?.credential !== 'token' && me?.accountId !== a.id && (
                <button
                  type="button"
                  class="secondary"
                  disabled={action.busy}
                  onClick={() =>
                    void action.run(async () => {
                      if (!confirm(`Turn off the second factor of ${a.name}? Only if they lost their authenticator.`))
                        return;
                      await ok(
                        admin.PATCH('/admin/staff/{id}', {
                          params: { path: { id: a.id } },
                          body: { secondFactor: false },
                        }),
                      );
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
                          await ok(
                            admin.DELETE('/admin/staff/{id}/tokens/{tokenId}', {
                              params: { path: { id: a.id, tokenId: token.id } },
                            }),
                          );
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
