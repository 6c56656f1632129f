import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ErrorBox, Field, Loading, rating, Table, useLoad } from '../ui';

interface AtpEntry {
  rank: number;
  uid: number;
  username: string;
  displayName: string;
  atp: number;
}

interface ChartEntry {
  rank: number;
  uid: number;
  username: string;
  displayName: string;
  acc: number;
  rating: number;
}

/** GET /admin/boards/atp and /admin/boards/charts/{levelId}. */
interface Board {
  board: 'atp' | 'chart';
  levelId?: number;
  /** The player's rank, with `around` only. */
  rank?: number | null;
  entries: Array<AtpEntry | ChartEntry>;
}

interface BoardQuery {
  board: 'atp' | 'chart';
  levelId: string;
  around: string;
  k: string;
  limit: string;
}

export function BoardsPage() {
  const [form, setForm] = useState<BoardQuery>({ board: 'atp', levelId: '', around: '', k: '5', limit: '50' });
  const [query, setQuery] = useState<BoardQuery>(form);
  const path =
    query.board === 'atp' ? '/admin/boards/atp' : `/admin/boards/charts/${encodeURIComponent(query.levelId)}`;
  const params = query.around.trim() !== '' ? { around: query.around.trim(), k: query.k } : { limit: query.limit };
  const board = useLoad(() => api<Board>('GET', path, { query: params }), [path, JSON.stringify(params)]);
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
