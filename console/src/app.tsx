import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, forgetToken, storedToken, storeToken } from './api';
import { ApiKeysPage } from './pages/api-keys';
import { AuditPage } from './pages/audit';
import { BansPage } from './pages/bans';
import { BoardsPage } from './pages/boards';
import { CatalogPage } from './pages/catalog';
import { OverviewPage } from './pages/overview';
import { PlayerPage, PlayersPage } from './pages/players';
import { PlaysPage } from './pages/plays';
import { ServersPage } from './pages/servers';
import { SettingsPage } from './pages/settings';
import { ErrorBox, Field } from './ui';

const NAV: Array<[string, string]> = [
  ['overview', 'Overview'],
  ['players', 'Players'],
  ['servers', 'Servers'],
  ['bans', 'Bans'],
  ['charts', 'Charts'],
  ['collections', 'Collections'],
  ['boards', 'Boards'],
  ['plays', 'Plays'],
  ['api-keys', 'API keys'],
  ['audit', 'Audit log'],
  ['settings', 'Maintenance & policy'],
];

/** The route is the hash (#/players/1002): no server-side fallback needed, nothing in the URL path. */
function useRoute(): string[] {
  const parse = () =>
    location.hash
      .replace(/^#\/?/, '')
      .split('/')
      .filter((part) => part !== '')
      .map(decodeURIComponent);
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const onChange = () => setRoute(parse());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function Login({ onLogin }: { onLogin: () => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Any admin read checks the token; the overview is the cheapest.
      await api('GET', '/admin/overview', { token: token.trim() });
      storeToken(token.trim());
      setToken('');
      onLogin();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="login">
      <h1>rhythmc console</h1>
      <form onSubmit={(event) => void submit(event)} autoComplete="off">
        <Field label="Admin token">
          <input
            type="password"
            name="token"
            value={token}
            required
            onInput={(event) => setToken(event.currentTarget.value)}
            autoComplete="off"
          />
        </Field>
        <button type="submit" disabled={busy}>
          Log in
        </button>
      </form>
      <ErrorBox error={error} />
      <p class="muted">
        The token is kept in this tab only (sessionStorage) and sent as an Authorization header; closing the tab forgets
        it.
      </p>
    </main>
  );
}

function Page({ route }: { route: string[] }) {
  const [name = 'overview', ...rest] = route;
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
    case 'boards':
      return <BoardsPage />;
    case 'plays':
      return <PlaysPage />;
    case 'api-keys':
      return <ApiKeysPage />;
    case 'audit':
      return <AuditPage target={rest.length > 0 ? rest.join('/') : ''} />;
    case 'settings':
      return <SettingsPage />;
    default:
      return <ErrorBox error={new ApiError(404, 'NOT_FOUND', `No page ${name}`)} />;
  }
}

export function App() {
  const [loggedIn, setLoggedIn] = useState(() => storedToken() !== null);
  const [menuOpen, setMenuOpen] = useState(false);
  const route = useRoute();
  useEffect(() => setMenuOpen(false), [route.join('/')]);
  if (!loggedIn) return <Login onLogin={() => setLoggedIn(true)} />;
  const logout = () => {
    forgetToken();
    setLoggedIn(false);
  };
  const current = route[0] ?? 'overview';
  return (
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
        <button type="button" class="secondary" onClick={logout}>
          Log out
        </button>
      </header>
      <nav class={menuOpen ? 'side open' : 'side'} aria-label="Pages">
        {NAV.map(([path, label]) => (
          <a key={path} href={`#/${path}`} aria-current={current === path ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <main class="content">
        <Page route={route} />
      </main>
    </div>
  );
}
