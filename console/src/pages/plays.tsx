import { useState } from 'preact/hooks';
import { api, Page } from '../api';
import { ErrorBox, Field, Loading, Notice, Pager, Table, useAction, useLoad } from '../ui';

/** A stored play as GET /admin/plays shows it (docs/decisions.md "Score integrity"). */
export interface Play {
  id: number;
  uid: number;
  username: string;
  levelId: number;
  acc: number;
  pass: boolean;
  receivedAt: string;
  flags: string[];
  review: 'none' | 'flagged' | 'approved' | 'voided';
  voidReason: string | null;
  counts: boolean;
}

type State = 'flagged' | 'approved' | 'voided' | 'all';

/** The review queue: flagged plays by default; approve, void (with a reason) or restore each. */
export function PlaysPage() {
  const [state, setState] = useState<State>('flagged');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const plays = useLoad(
    () => api<Page<Play>>('GET', '/admin/plays', { query: { state, limit: 50, cursor } }),
    [state, cursor],
  );
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const act = (play: Play, verb: 'approve' | 'void' | 'restore') =>
    action.run(async () => {
      let body: { reason?: string } | undefined;
      if (verb === 'void') {
        const reason = prompt(
          `Void play ${play.id} of ${play.username}? Its player's bests, ATP and ranks are recomputed without it. Reason (optional):`,
        );
        if (reason === null) return;
        body = reason.trim() === '' ? {} : { reason: reason.trim() };
      } else if (!confirm(`${verb === 'approve' ? 'Approve' : 'Restore'} play ${play.id} of ${play.username}?`)) {
        return;
      }
      const answer = await api<Play>('POST', `/admin/plays/${play.id}/${verb}`, body === undefined ? {} : { body });
      setDone(`Play ${answer.id}: ${answer.review}, ${answer.counts ? 'counts' : 'does not count'}`);
      plays.reload();
    });
  return (
    <section>
      <h1>Plays</h1>
      <p class="muted">Plays that fail a consistency check are stored but count for nothing until approved.</p>
      <div class="row wrap">
        <Field label="Show">
          <select
            value={state}
            onChange={(event) => {
              setCursors([]);
              setState(event.currentTarget.value as State);
            }}
          >
            <option value="flagged">flagged (waiting for review)</option>
            <option value="approved">approved</option>
            <option value="voided">voided</option>
            <option value="all">all plays</option>
          </select>
        </Field>
        <button type="button" class="secondary" onClick={plays.reload}>
          Refresh
        </button>
      </div>
      <ErrorBox error={plays.error} />
      <ErrorBox error={action.error} />
      {done && <Notice>{done}</Notice>}
      <Loading loading={plays.loading && !plays.data} />
      {plays.data && plays.data.items.length === 0 && <p class="muted">No play here.</p>}
      {plays.data && plays.data.items.length > 0 && (
        <Table
          label="Plays"
          head={['ID', 'Player', 'Level', 'Acc', 'Received', 'Failed checks', 'Review', 'Counts', '']}
        >
          {plays.data.items.map((play) => (
            <tr key={play.id}>
              <td>{play.id}</td>
              <td>
                <a href={`#/players/${play.uid}`}>{play.username}</a> <span class="muted">#{play.uid}</span>
              </td>
              <td>{play.levelId}</td>
              <td>{play.pass ? play.acc : `${play.acc} (failed)`}</td>
              <td>{play.receivedAt}</td>
              <td>{play.flags.join(', ') || '—'}</td>
              <td>{play.review === 'voided' && play.voidReason ? `voided: ${play.voidReason}` : play.review}</td>
              <td>{play.counts ? 'yes' : 'no'}</td>
              <td>
                {play.review === 'flagged' && (
                  <button
                    type="button"
                    class="secondary"
                    disabled={action.busy}
                    onClick={() => void act(play, 'approve')}
                  >
                    Approve
                  </button>
                )}
                {play.review === 'voided' ? (
                  <button
                    type="button"
                    class="secondary"
                    disabled={action.busy}
                    onClick={() => void act(play, 'restore')}
                  >
                    Restore
                  </button>
                ) : (
                  <button type="button" class="secondary" disabled={action.busy} onClick={() => void act(play, 'void')}>
                    Void
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager
        cursor={plays.data?.nextCursor ?? null}
        atFirst={cursors.length === 0}
        onFirst={() => setCursors([])}
        onNext={() => plays.data?.nextCursor && setCursors([...cursors, plays.data.nextCursor])}
      />
    </section>
  );
}
