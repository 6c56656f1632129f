import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import {
  atpBoard,
  chartBoard,
  charts,
  type Chart,
  type PlayerSummary,
  type Profile,
  profileByUid,
  profileByUuid,
  searchPlayers,
  SiteError,
} from './api';

/** How many entries a board page shows. */
const BOARD_LIMIT = 50;
/** What a username holds (the public API refuses anything else with 400, so the page says so first). */
const NAME_PATTERN = /^[A-Za-z0-9_]{1,32}$/;
const UUID_PATTERN = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;
const UID_PATTERN = /^[1-9][0-9]{0,17}$/;
const LEVEL_PATTERN = /^(0|[1-9][0-9]{0,9})$/;

/** The numbers as every page shows them (the browser test formats the API's numbers the same way). */
export const fmt = {
  atp: (value: number | null) => (value === null ? '–' : value.toFixed(2)),
  acc: (value: number) => `${value.toFixed(2)}%`,
  rating: (value: number) => value.toFixed(2),
  rank: (value: number | null) => (value === null ? '–' : `#${value}`),
};

/** Links: everything is in the hash, so a link is the page's own URL plus one of these. */
export const link = {
  home: () => '#/',
  charts: () => '#/charts',
  chart: (levelId: number) => `#/chart/${levelId}`,
  player: (uid: number) => `#/player/id/${uid}`,
  playerByName: (name: string) => `#/player/${encodeURIComponent(name)}`,
  playerByUuid: (uuid: string) => `#/player/uuid/${uuid}`,
  search: (prefix: string) => `#/search/${encodeURIComponent(prefix)}`,
};

type Route =
  | { page: 'home' }
  | { page: 'charts' }
  | { page: 'chart'; levelId: number }
  | { page: 'search'; prefix: string }
  | { page: 'player'; by: 'name' | 'uuid' | 'uid'; value: string }
  | { page: 'unknown' };

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decode);
  if (parts.length === 0) return { page: 'home' };
  const [head, a, b] = parts;
  if (head === 'charts' && parts.length === 1) return { page: 'charts' };
  if (head === 'chart' && parts.length === 2 && LEVEL_PATTERN.test(a)) return { page: 'chart', levelId: Number(a) };
  if (head === 'search' && parts.length <= 2) return { page: 'search', prefix: a ?? '' };
  if (head === 'player' && parts.length === 3 && a === 'uuid') return { page: 'player', by: 'uuid', value: b };
  if (head === 'player' && parts.length === 3 && a === 'id') return { page: 'player', by: 'uid', value: b };
  if (head === 'player' && parts.length === 2) return { page: 'player', by: 'name', value: a };
  return { page: 'unknown' };
}

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    window.addEventListener('hashchange', changed);
    return () => window.removeEventListener('hashchange', changed);
  }, []);
  return hash;
}

type Load<T> = { state: 'loading' } | { state: 'ok'; data: T } | { state: 'error'; error: SiteError };

/** Runs `load` when `key` changes (and again on retry); a late answer of an older key is dropped. */
function useLoad<T>(key: string, load: () => Promise<T>): [Load<T>, () => void] {
  const [result, setResult] = useState<Load<T>>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let current = true;
    setResult({ state: 'loading' });
    load().then(
      (data) => current && setResult({ state: 'ok', data }),
      (error: unknown) =>
        current &&
        setResult({
          state: 'error',
          error: error instanceof SiteError ? error : new SiteError(0, 'Something went wrong. Please try again later.'),
        }),
    );
    return () => {
      current = false;
    };
  }, [key, attempt]);
  return [result, () => setAttempt((n) => n + 1)];
}

function Problem({ error, retry }: { error: SiteError; retry: () => void }) {
  return (
    <div class="problem" role="alert">
      <p>{error.message}</p>
      <button type="button" onClick={retry}>
        Try again
      </button>
    </div>
  );
}

/** Loading, the error message, or the page: never a blank page. */
function Loaded<T>({
  load,
  retry,
  children,
}: {
  load: Load<T>;
  retry: () => void;
  children: (data: T) => ComponentChildren;
}) {
  if (load.state === 'loading')
    return (
      <p class="muted" aria-busy="true">
        Loading…
      </p>
    );
  if (load.state === 'error') return <Problem error={load.error} retry={retry} />;
  return <>{children(load.data)}</>;
}

/** A player's name as text (never HTML): the display name, and the username under it when they differ. */
function PlayerName({ player }: { player: { uid: number; username: string; displayName: string } }) {
  return (
    <a class="player" href={link.player(player.uid)}>
      <span class="name">{player.displayName}</span>
      {player.displayName !== player.username && <span class="username">{player.username}</span>}
    </a>
  );
}

function AtpBoardPage() {
  const [load, retry] = useLoad('atp', () => atpBoard(BOARD_LIMIT));
  return (
    <section>
      <h1>Player ranking</h1>
      <Loaded load={load} retry={retry}>
        {(board) =>
          board.entries.length === 0 ? (
            <p class="muted">No ranked players yet.</p>
          ) : (
            <table class="board" data-board="atp">
              <thead>
                <tr>
                  <th class="rank">#</th>
                  <th>Player</th>
                  <th class="num">ATP</th>
                </tr>
              </thead>
              <tbody>
                {board.entries.map((entry) => (
                  <tr key={entry.uid} data-uid={entry.uid}>
                    <td class="rank">{entry.rank}</td>
                    <td>
                      <PlayerName player={entry} />
                    </td>
                    <td class="num">{fmt.atp(entry.atp)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
    </section>
  );
}

function ChartsPage() {
  const [load, retry] = useLoad('charts', charts);
  return (
    <section>
      <h1>Charts</h1>
      <Loaded load={load} retry={retry}>
        {(list) =>
          list.length === 0 ? (
            <p class="muted">No charts yet.</p>
          ) : (
            <ul class="charts">
              {list.map((chart) => (
                <li key={chart.levelId}>
                  <a href={link.chart(chart.levelId)}>
                    <span class="name">{chart.name}</span>
                    <span class="constant">{chart.difficultyConstant.toFixed(1)}</span>
                  </a>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}

function ChartBoardPage({ levelId }: { levelId: number }) {
  const [load, retry] = useLoad(`chart:${levelId}`, async () => {
    const [board, list] = await Promise.all([chartBoard(levelId, BOARD_LIMIT), charts()]);
    return { board, chart: list.find((chart: Chart) => chart.levelId === levelId) ?? null };
  });
  return (
    <section>
      <Loaded load={load} retry={retry}>
        {({ board, chart }) => (
          <>
            <h1>{chart?.name ?? `Chart ${levelId}`}</h1>
            {chart && <p class="muted">Difficulty {chart.difficultyConstant.toFixed(1)}</p>}
            {board.entries.length === 0 ? (
              <p class="muted">Nobody has played this chart yet.</p>
            ) : (
              <table class="board" data-board="chart">
                <thead>
                  <tr>
                    <th class="rank">#</th>
                    <th>Player</th>
                    <th class="num">Acc</th>
                    <th class="num">Rating</th>
                  </tr>
                </thead>
                <tbody>
                  {board.entries.map((entry) => (
                    <tr key={entry.uid} data-uid={entry.uid}>
                      <td class="rank">{entry.rank}</td>
                      <td>
                        <PlayerName player={entry} />
                      </td>
                      <td class="num">{fmt.acc(entry.acc)}</td>
                      <td class="num">{fmt.rating(entry.rating)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}

function PlayerList({ players }: { players: PlayerSummary[] }) {
  return (
    <ul class="players">
      {players.map((player) => (
        <li key={player.uid}>
          <PlayerName player={player} />
        </li>
      ))}
    </ul>
  );
}

function SearchPage({ prefix }: { prefix: string }) {
  const valid = NAME_PATTERN.test(prefix);
  const [load, retry] = useLoad(`search:${prefix}`, () =>
    valid ? searchPlayers({ prefix }) : Promise.resolve({ players: [] }),
  );
  if (!valid)
    return (
      <section>
        <h1>Find a player</h1>
        <p class="muted">A player name is 1 to 32 letters, digits or _.</p>
      </section>
    );
  return (
    <section>
      <h1>Players starting with “{prefix}”</h1>
      <Loaded load={load} retry={retry}>
        {(found) =>
          found.players.length === 0 ? <p class="muted">No player found.</p> : <PlayerList players={found.players} />
        }
      </Loaded>
    </section>
  );
}

function ProfileView({ profile }: { profile: Profile }) {
  return (
    <article class="profile">
      <h1 class="name">{profile.displayName}</h1>
      <p class="muted">
        {profile.username}
        {profile.uuid && (
          <>
            {' · '}
            <a href={link.playerByUuid(profile.uuid)} class="permalink">
              Link to this player
            </a>
          </>
        )}
      </p>
      <dl class="stats">
        <div>
          <dt>ATP</dt>
          <dd data-stat="atp">{fmt.atp(profile.atp)}</dd>
        </div>
        <div>
          <dt>Rank</dt>
          <dd data-stat="rank">{fmt.rank(profile.siteRank)}</dd>
        </div>
        <div>
          <dt>Charts played</dt>
          <dd data-stat="bestCount">{profile.bestCount}</dd>
        </div>
      </dl>
      <h2>Best plays</h2>
      {profile.bests.length === 0 ? (
        <p class="muted">No counted play yet.</p>
      ) : (
        <table class="board" data-board="bests">
          <thead>
            <tr>
              <th>Chart</th>
              <th class="num">Acc</th>
              <th class="num">Rating</th>
              <th class="num">Rank</th>
            </tr>
          </thead>
          <tbody>
            {profile.bests.map((best) => (
              <tr key={best.levelId} data-level={best.levelId}>
                <td>
                  <a href={link.chart(best.levelId)}>{best.chartName}</a>
                </td>
                <td class="num">{fmt.acc(best.acc)}</td>
                <td class="num">{fmt.rating(best.rating)}</td>
                <td class="num">{fmt.rank(best.trackRank)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Recent plays</h2>
      {profile.recentPlays.length === 0 ? (
        <p class="muted">No recent play.</p>
      ) : (
        <table class="board" data-board="recent">
          <thead>
            <tr>
              <th>Chart</th>
              <th class="num">Acc</th>
              <th class="num">Rating</th>
              <th class="when">When</th>
            </tr>
          </thead>
          <tbody>
            {profile.recentPlays.map((play, index) => (
              <tr key={index} data-level={play.levelId}>
                <td>
                  <a href={link.chart(play.levelId)}>{play.chartName}</a>
                  {play.allPerfect ? <span class="badge">AP</span> : play.fullCombo && <span class="badge">FC</span>}
                </td>
                <td class="num">{fmt.acc(play.acc)}</td>
                <td class="num">{fmt.rating(play.rating)}</td>
                <td class="when">{play.playedAt.slice(0, 10)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}

type PlayerAnswer = { kind: 'profile'; profile: Profile } | { kind: 'choose'; players: PlayerSummary[] };

function PlayerPage({ by, value }: { by: 'name' | 'uuid' | 'uid'; value: string }) {
  const valid =
    by === 'name' ? NAME_PATTERN.test(value) : by === 'uuid' ? UUID_PATTERN.test(value) : UID_PATTERN.test(value);
  const [load, retry] = useLoad<PlayerAnswer>(`player:${by}:${value}`, async () => {
    if (!valid) throw new SiteError(404, 'No such player.');
    if (by === 'uid') return { kind: 'profile', profile: await profileByUid(value) };
    if (by === 'uuid') return { kind: 'profile', profile: await profileByUuid(value) };
    const found = await searchPlayers({ name: value });
    if (found.players.length === 0) throw new SiteError(404, `No player named ${value}.`);
    if (found.players.length > 1) return { kind: 'choose', players: found.players };
    return { kind: 'profile', profile: await profileByUid(String(found.players[0].uid)) };
  });
  return (
    <section>
      <Loaded load={load} retry={retry}>
        {(answer) =>
          answer.kind === 'profile' ? (
            <ProfileView profile={answer.profile} />
          ) : (
            <>
              <h1>Several players were named {value}</h1>
              <PlayerList players={answer.players} />
            </>
          )
        }
      </Loaded>
    </section>
  );
}

function SearchForm() {
  const [text, setText] = useState('');
  const [hint, setHint] = useState<string | null>(null);
  return (
    <form
      class="search"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        const query = text.trim();
        if (!NAME_PATTERN.test(query)) {
          setHint('Letters, digits and _ only');
          return;
        }
        setHint(null);
        location.hash = link.search(query);
      }}
    >
      <input
        type="search"
        aria-label="Player name"
        placeholder="Find a player"
        maxLength={32}
        value={text}
        onInput={(event) => setText((event.target as HTMLInputElement).value)}
      />
      <button type="submit">Search</button>
      {hint && <span class="hint">{hint}</span>}
    </form>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'home':
      return <AtpBoardPage />;
    case 'charts':
      return <ChartsPage />;
    case 'chart':
      return <ChartBoardPage levelId={route.levelId} />;
    case 'search':
      return <SearchPage prefix={route.prefix} />;
    case 'player':
      return <PlayerPage by={route.by} value={route.value} />;
    default:
      return (
        <section>
          <h1>Page not found</h1>
          <p>
            <a href={link.home()}>Back to the ranking</a>
          </p>
        </section>
      );
  }
}

export function App({ name }: { name: string }) {
  const route = parseRoute(useHash());
  useEffect(() => {
    document.title = name;
    window.scrollTo(0, 0);
  }, [route.page, name]);
  return (
    <>
      <header class="top">
        <a class="brand" href={link.home()}>
          {name}
        </a>
        <nav>
          <a href={link.home()} aria-current={route.page === 'home' ? 'page' : undefined}>
            Ranking
          </a>
          <a href={link.charts()} aria-current={route.page === 'charts' || route.page === 'chart' ? 'page' : undefined}>
            Charts
          </a>
        </nav>
        <SearchForm />
      </header>
      <main>
        <Page route={route} />
      </main>
    </>
  );
}
