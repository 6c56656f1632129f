import { useState } from 'preact/hooks';
import { admin, ApiError, ok, typedNumber, type Schemas } from '../api';
import { ErrorBox, Field, Loading, rating, Table, Time, useLoad } from '../ui';

/** GET /admin/boards/atp and /admin/boards/charts/{levelId}. */
type Board = Schemas['AtpBoardResponse'] | Schemas['ChartBoardResponse'];

interface BoardQuery {
  board: 'atp' | 'chart';
  levelId: string;
  around: string;
  k: string;
  limit: string;
  /** all, day, week, month, season:<slug> or a period id. */
  period: string;
}

/** The boards; `period` (from #/boards/<period>, e.g. a season's link) is the one shown first. */
export function BoardsPage({ period = 'all' }: { period?: string }) {
  const [form, setForm] = useState<BoardQuery>({ board: 'atp', levelId: '', around: '', k: '5', limit: '50', period });
  const [query, setQuery] = useState<BoardQuery>(form);
  const path =
    query.board === 'atp' ? '/admin/boards/atp' : `/admin/boards/charts/${encodeURIComponent(query.levelId)}`;
  const params = {
    ...(query.around.trim() !== ''
      ? { around: typedNumber(query.around.trim()), k: typedNumber(query.k) }
      : { limit: typedNumber(query.limit) }),
    ...(query.period.trim() !== '' && query.period.trim() !== 'all' ? { period: query.period.trim() } : {}),
  };
  const board = useLoad(
    (): Promise<Board> =>
      query.board === 'atp'
        ? ok(admin.GET('/admin/boards/atp', { params: { query: params } }))
        : ok(
            admin.GET('/admin/boards/charts/{levelId}', {
              params: { path: { levelId: typedNumber(query.levelId) }, query: params },
            }),
          ),
    [path, JSON.stringify(params)],
  );
  const set = (name: keyof BoardQuery) => (event: Event) =>
    setForm({ ...form, [name]: (event.currentTarget as HTMLInputElement).value });
  const entries = board.data?.entries ?? [];
  return (
    <section>
      <h1>Boards</h1>
      <form
        class="row wrap"
        onSubmit={(event) => {
          event.preventDefault();
          setQuery(form);
        }}
      >
        <Field label="Board">
          <select value={form.board} onChange={set('board')}>
            <option value="atp">ATP</option>
            <option value="chart">a chart</option>
          </select>
        </Field>
        {form.board === 'chart' && (
          <Field label="levelId">
            <input value={form.levelId} required inputMode="numeric" onInput={set('levelId')} />
          </Field>
        )}
        <Field label="Period (all, day, week, month, season:slug)">
          <input value={form.period} onInput={set('period')} />
        </Field>
        <Field label="Around uid (optional)">
          <input value={form.around} inputMode="numeric" onInput={set('around')} />
        </Field>
        {form.around.trim() !== '' ? (
          <Field label="k (each side)">
            <input value={form.k} inputMode="numeric" onInput={set('k')} />
          </Field>
        ) : (
          <Field label="Limit">
            <input value={form.limit} inputMode="numeric" onInput={set('limit')} />
          </Field>
        )}
        <button type="submit">Show</button>
      </form>
      <ErrorBox error={board.error} />
      {board.error instanceof ApiError && board.error.status === 404 && board.error.message === 'Not found' && (
        <p class="muted">This service may predate the board reads ({path}).</p>
      )}
      <Loading loading={board.loading} />
      {board.data && (
        <>
          {board.data.period && (
            <p>
              {board.data.period.kind === 'season'
                ? `Season ${board.data.period.name ?? ''} (${board.data.period.slug ?? ''})`
                : `This ${board.data.period.kind}`}
              : <Time value={board.data.period.startsAt} /> to <Time value={board.data.period.endsAt} />{' '}
              {board.data.period.closed ? (
                <span class="badge off">closed: the archive, as read at the close</span>
              ) : (
                <span class="badge on">live</span>
              )}
            </p>
          )}
          {board.data.rank !== undefined && <p>Rank of the player: {board.data.rank ?? 'not ranked'}</p>}
          {entries.length === 0 ? (
            <p class="muted">Nobody on this board.</p>
          ) : (
            <Table
              label="Board"
              head={board.data.board === 'atp' ? ['Rank', 'Player', 'ATP'] : ['Rank', 'Player', 'Acc', 'Rating']}
            >
              {entries.map((entry) => (
                <tr key={entry.uid} class={query.around === String(entry.uid) ? 'active' : undefined}>
                  <td>{entry.rank}</td>
                  <td>
                    <a href={`#/players/${entry.uid}`}>{entry.displayName}</a>{' '}
                    <span class="muted">({entry.username})</span>
                  </td>
                  {'atp' in entry ? (
                    <td>{rating(entry.atp)}</td>
                  ) : (
                    <>
                      <td>{entry.acc}</td>
                      <td>{rating(entry.rating)}</td>
                    </>
                  )}
                </tr>
              ))}
            </Table>
          )}
        </>
      )}
    </section>
  );
}
