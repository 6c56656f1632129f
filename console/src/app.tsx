import { useEffect, useState } from 'preact/hooks';
import { admin, ApiError, Me, ok, signIn, signOut, SIGNED_OUT_EVENT } from './api';
import { AccountPage } from './pages/account';
import { ApiKeysPage } from './pages/api-keys';
import { SeasonsPage } from './pages/seasons';
import { WebhooksPage } from './pages/webhooks';
import { AuditPage } from './pages/audit';
import { BansPage } from './pages/bans';
import { BoardsPage } from './pages/boards';
import { CatalogPage } from './pages/catalog';
import { OverviewPage } from './pages/overview';
import { PacksPage } from './pages/packs';
import { PlayerPage, PlayersPage } from './pages/players';
import { PlayPage, PlaysPage } from './pages/plays';
import { ServersPage } from './pages/servers';
import { SettingsPage } from './pages/settings';
import { StaffMemberPage, StaffPage } from './pages/staff';
import { ErrorBox, Field, Loading, SessionContext, setServiceTimeZone } from './ui';

/** The pages, and the permission each needs to be listed (the API refuses the rest with 403 anyway). */
const NAV: Array<[path: string, label: string, permissions: Me['permissions']]> = [
  ['overview', 'Overview', ['overview.read']],
  ['players', 'Players', ['players.read']],
  ['servers', 'Servers', ['servers.read']],
  ['bans', 'Bans', ['players.read']],
  ['charts', 'Charts', ['catalog.read']],
  ['collections', 'Collections', ['catalog.read']],
  ['packs', 'Packs & resources', ['catalog.read']],
  ['boards', 'Boards', ['boards.read']],
  ['seasons', 'Seasons', ['boards.read']],
  ['plays', 'Plays', ['plays.read']],
  ['api-keys', 'API keys', ['api-keys.manage']],
  ['webhooks', 'Webhooks', ['webhooks.manage']],
  ['audit', 'Audit log', ['audit.read']],
  ['settings', 'Network settings', ['settings.write', 'ratings.recompute', 'database.backup']],
  ['staff', 'Staff', ['staff.manage']],
  ['account', 'My account', ['account.self']],
];

/** A part of the hash decoded, or as it is when its escapes are malformed (a pasted `#/players/%E0`). */
function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The route is the hash (#/players/1002): no server-side fallback needed, nothing in the URL path. */
function useRoute(): string[] {
  const parse = () =>
    location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter((part) => part !== '')
      .map(decode);
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const onChange = () => setRoute(parse());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  // Shown once the service asked for an authenticator code (a 401 with secondFactor "totp").
  const [askCode, setAskCode] = useState(false);
  const [code, setCode] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await signIn(name.trim(), password, askCode ? code.trim() : undefined);
      setPassword('');
      setCode('');
      onSignedIn(me);
    } catch (reason) {
      if (reason instanceof ApiError && reason.details.secondFactor === 'totp') {
        setCode('');
        // The first ask is no failure: the form only grows a field.
        if (!askCode) {
          setAskCode(true);
          return;
        }
      }
      setError(reason);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>rhythmc console</h1>
      <form onSubmit={(event) => void submit(event)} aria-label="Sign in">
        <Field label="Name">
          <input
            name="username"
            value={name}
            required
            autoComplete="username"
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </Field>
        <Field label="Password">
          <input
            type="password"
            name="password"
            value={password}
            required
            autoComplete="current-password"
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </Field>
        {askCode && (
          <Field label="Authenticator code">
            <input
              name="code"
              value={code}
              required
              autoFocus
              inputMode="numeric"
              pattern="[0-9]{6}"
              maxLength={6}
              autoComplete="one-time-code"
              onInput={(event) => setCode(event.currentTarget.value)}
            />
          </Field>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <ErrorBox error={error} />
      <p class="muted">
        Your session is a cookie this page cannot read; it ends when you sign out, after a while without use, and at the
        latest after the time the service allows.
      </p>
    </main>
  );
}

function Page({ route, me }: { route: string[]; me: Me }) {
  const [name = 'overview', ...rest] = route;
  const entry = NAV.find(([path]) => path === name);
  if (entry && !entry[2].some((permission) => me.permissions.includes(permission)))
    return <ErrorBox error={new ApiError(403, 'FORBIDDEN', `The ${me.role} role may not see the ${entry[1]} page`)} />;
  switch (name) {
    case 'overview':
      return <OverviewPage />;
    case 'players':
      return rest[0] ? <PlayerPage uid={rest[0]} /> : <PlayersPage />;
    case 'servers':
      return <ServersPage />;
    case 'bans':
      return <BansPage />;
    case 'charts':
      return <CatalogPage key="charts" kind="charts" />;
    case 'collections':
      return <CatalogPage key="collections" kind="collections" />;
    case 'packs':
      return <PacksPage />;
    case 'boards':
      return <BoardsPage key={rest[0] ?? 'all'} period={rest[0] ?? 'all'} />;
    case 'seasons':
      return <SeasonsPage />;
    case 'plays':
      return rest[0] ? <PlayPage id={rest[0]} /> : <PlaysPage />;
    case 'api-keys':
      return <ApiKeysPage />;
    case 'webhooks':
      return <WebhooksPage />;
    case 'audit':
      return <AuditPage target={rest.length > 0 ? rest.join('/') : ''} />;
    case 'settings':
      return <SettingsPage />;
    case 'staff':
      return rest[0] ? <StaffMemberPage id={rest[0]} /> : <StaffPage />;
    case 'account':
      return <AccountPage me={me} />;
    default:
      return <ErrorBox error={new ApiError(404, 'NOT_FOUND', `No page ${name}`)} />;
  }
}

/** The first page the role may see. */
function home(me: Me): string {
  return (
    NAV.find(([, , permissions]) => permissions.some((permission) => me.permissions.includes(permission)))?.[0] ?? ''
  );
}

export function App() {
  // undefined: not known yet (asking the service); null: signed out.
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [menuOpen, setMenuOpen] = useState(false);
  const [signOutError, setSignOutError] = useState<unknown>(null);
  const route = useRoute();
  useEffect(() => setMenuOpen(false), [route.join('/')]);
  useEffect(() => {
    ok(admin.GET('/admin/me')).then(
      (answer) => setMe(answer),
      () => setMe(null),
    );
    const onSignedOut = () => setMe(null);
    window.addEventListener(SIGNED_OUT_EVENT, onSignedOut);
    return () => window.removeEventListener(SIGNED_OUT_EVENT, onSignedOut);
  }, []);
  if (me === undefined) return <Loading loading />;
  if (me === null) return <SignIn onSignedIn={setMe} />;
  setServiceTimeZone(me.timeZone);
  const leave = async () => {
    setSignOutError(null);
    try {
      await signOut();
      setMe(null);
    } catch (reason) {
      if (reason instanceof ApiError && reason.status === 401) setMe(null);
      else setSignOutError(reason);
    }
  };
  const current = route[0] ?? home(me);
  const visible = NAV.filter(([, , permissions]) =>
    permissions.some((permission) => me.permissions.includes(permission)),
  );
  return (
    <SessionContext.Provider value={me}>
      <div class="shell">
        <header class="top">
          <button
            type="button"
            class="menu-button secondary"
            aria-expanded={menuOpen}
            onClick={() => setMenuOpen(!menuOpen)}
          >
            Menu
          </button>
          <strong class="brand">rhythmc console</strong>
          <span class="who">
            <a href="#/account">{me.name}</a> <span class="badge">{me.role}</span>
          </span>
          <button type="button" class="secondary" onClick={() => void leave()}>
            Sign out
          </button>
        </header>
        <nav class={menuOpen ? 'side open' : 'side'} aria-label="Pages">
          {visible.map(([path, label]) => (
            <a key={path} href={`#/${path}`} aria-current={current === path ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <main class="content">
          <ErrorBox error={signOutError} />
          <Page route={route.length > 0 ? route : [home(me)]} me={me} />
        </main>
      </div>
    </SessionContext.Provider>
  );
}
