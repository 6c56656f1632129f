import { useState } from 'preact/hooks';
import { admin, Me, ok, type Schemas } from '../api';
import { ErrorBox, Field, Loading, Notice, SecretOnce, Table, Time, useAction, useLoad } from '../ui';

type Token = Schemas['StaffTokenResponse'];

const ROLES: Array<Me['role']> = ['read-only', 'support', 'moderator', 'admin', 'owner'];

function PasswordForm() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await ok(admin.PUT('/admin/me/password', { body: { currentPassword: current, newPassword: next } }));
      setCurrent('');
      setNext('');
      setDone('Password changed; your other sessions have ended.');
    });
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Change your password">
      <h2>Change your password</h2>
      <Field label="Current password">
        <input
          type="password"
          name="current-password"
          autoComplete="current-password"
          value={current}
          required
          onInput={(event) => setCurrent(event.currentTarget.value)}
        />
      </Field>
      <Field label="New password (15 characters or more)">
        <input
          type="password"
          name="new-password"
          autoComplete="new-password"
          value={next}
          required
          minLength={15}
          maxLength={256}
          onInput={(event) => setNext(event.currentTarget.value)}
        />
      </Field>
      <button type="submit" disabled={action.busy}>
        Change password
      </button>
      {done && <Notice>{done}</Notice>}
      <ErrorBox error={action.error} />
    </form>
  );
}

function Tokens({ me }: { me: Me }) {
  const tokens = useLoad(() => ok(admin.GET('/admin/me/tokens')), []);
  const [name, setName] = useState('');
  const [role, setRole] = useState(me.role);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  const create = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const created = await ok(admin.POST('/admin/me/tokens', { body: { name, role } }));
      setName('');
      setSecret({ label: `API token ${created.name}`, value: created.token });
      setDone(`Created ${created.name} (${created.role}): use it as STAFF_TOKEN for the CLI.`);
      tokens.reload();
    });
  };
  const revoke = (token: Token) =>
    action.run(async () => {
      if (!confirm(`Revoke ${token.name}? It stops working at once.`)) return;
      await ok(admin.DELETE('/admin/me/tokens/{id}', { params: { path: { id: token.id } } }));
      setDone(`Revoked ${token.name}`);
      tokens.reload();
    });
  return (
    <section aria-label="Personal API tokens">
      <h2>Personal API tokens</h2>
      <p class="muted">
        For the CLI (STAFF_TOKEN) and scripts: each acts with its role or yours, whichever is lower, and is shown only
        once.
      </p>
      {done && <Notice>{done}</Notice>}
      {secret && <SecretOnce label={secret.label} value={secret.value} onDone={() => setSecret(null)} />}
      <ErrorBox error={action.error} />
      <form class="row wrap" onSubmit={create} aria-label="New API token">
        <Field label="Token name">
          <input
            name="token-name"
            value={name}
            required
            maxLength={64}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </Field>
        <Field label="Role">
          <select name="token-role" value={role} onChange={(event) => setRole(event.currentTarget.value as Me['role'])}>
            {ROLES.slice(0, ROLES.indexOf(me.role) + 1).map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" disabled={action.busy}>
          Create token
        </button>
      </form>
      <ErrorBox error={tokens.error} />
      <Loading loading={tokens.loading && !tokens.data} />
      {tokens.data && tokens.data.items.length === 0 && <p class="muted">No token.</p>}
      {tokens.data && tokens.data.items.length > 0 && (
        <Table label="Your API tokens" head={['Name', 'Role', 'Created', 'Last used', '']}>
          {tokens.data.items.map((token) => (
            <tr key={token.id}>
              <td>{token.name}</td>
              <td>{token.role}</td>
              <td>
                <Time value={token.createdAt} />
              </td>
              <td>{token.lastUsedAt ? <Time value={token.lastUsedAt} /> : 'never'}</td>
              <td>
                <button type="button" class="secondary" disabled={action.busy} onClick={() => void revoke(token)}>
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

/** Who is signed in, the session's end, the password and the personal API tokens. */
/** The authenticator code at sign-in: set up (password, then the secret, then a code), or turned off (password). */
function SecondFactor({ me }: { me: Me }) {
  const [on, setOn] = useState(me.secondFactor);
  const [password, setPassword] = useState('');
  const [enrolment, setEnrolment] = useState<{ secret: string; uri: string } | null>(null);
  const [code, setCode] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  // Each state's form has a key of its own: reusing the code field's <input> for the password left
  // it with maxlength 0 (Preact keeps a removed maxLength property as 0).
  const start = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      setEnrolment(await ok(admin.POST('/admin/me/totp', { body: { password } })));
      setPassword('');
      setDone(null);
    });
  };
  const confirm = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await ok(admin.PUT('/admin/me/totp', { body: { code: code.trim() } }));
      setEnrolment(null);
      setCode('');
      setOn(true);
      setDone('On: every sign-in from now on asks for a code of your authenticator app.');
    });
  };
  const turnOff = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await ok(admin.DELETE('/admin/me/totp', { body: { password } }));
      setPassword('');
      setOn(false);
      setDone('Off: sign-in asks for your password only.');
    });
  };
  const passwordField = (
    <Field label="Your password">
      <input
        type="password"
        name="totp-password"
        autoComplete="current-password"
        value={password}
        required
        onInput={(event) => setPassword(event.currentTarget.value)}
      />
    </Field>
  );
  return (
    <section class="card" aria-label="Second factor">
      <h2>Second factor (authenticator app)</h2>
      {on ? (
        <form key="off" onSubmit={turnOff} aria-label="Turn the second factor off">
          <p>On: sign-in asks for a six-digit code of your authenticator app.</p>
          {passwordField}
          <button type="submit" disabled={action.busy}>
            Turn off
          </button>
        </form>
      ) : enrolment ? (
        <form key="confirm" onSubmit={confirm} aria-label="Confirm the second factor">
          <p>
            Add this key to your authenticator app (as a setup key, time-based), or open the link on the phone that has
            the app; then enter the code it shows.
          </p>
          <SecretOnce label="Authenticator key" value={enrolment.secret} onDone={() => setEnrolment(null)} />
          <p class="mono small">
            <a href={enrolment.uri}>{enrolment.uri}</a>
          </p>
          <Field label="Code shown by the app">
            <input
              name="totp-code"
              inputMode="numeric"
              pattern="[0-9]{6}"
              maxLength={6}
              autoComplete="one-time-code"
              value={code}
              required
              onInput={(event) => setCode(event.currentTarget.value)}
            />
          </Field>
          <button type="submit" disabled={action.busy}>
            Turn on
          </button>
        </form>
      ) : (
        <form key="start" onSubmit={start} aria-label="Set up a second factor">
          <p>Off: sign-in asks for your password only.</p>
          {passwordField}
          <button type="submit" disabled={action.busy}>
            Set up
          </button>
        </form>
      )}
      {done && <Notice>{done}</Notice>}
      <ErrorBox error={action.error} />
    </section>
  );
}

export function AccountPage({ me }: { me: Me }) {
  return (
    <section>
      <h1>My account</h1>
      <dl class="facts">
        <dt>Name</dt>
        <dd>{me.name}</dd>
        <dt>Role</dt>
        <dd>{me.role}</dd>
        <dt>Permissions</dt>
        <dd class="mono small">{me.permissions.join(' ')}</dd>
        {me.session && (
          <>
            <dt>Session ends</dt>
            <dd>
              at <Time value={me.session.expiresAt} />, or after {Math.round(me.session.idleTimeoutSeconds / 60)}{' '}
              minutes without use
            </dd>
          </>
        )}
        <dt>Time zone</dt>
        <dd>{me.timeZone} (every time shown is in it)</dd>
      </dl>
      {me.accountId === null ? (
        <p class="muted">ADMIN_TOKEN belongs to no staff account: no password or API tokens.</p>
      ) : (
        <>
          <PasswordForm />
          {me.credential === 'session' && <SecondFactor me={me} />}
          <Tokens me={me} />
        </>
      )}
    </section>
  );
}
