import { useState } from 'preact/hooks';
import { typedNumber, admin, ok, type Schemas } from '../api';
import { ErrorBox, Field, Loading, Notice, Pager, Table, Time, useAction, useCan, useLoad, usePagedList } from '../ui';

/** A stored play as GET /admin/plays shows it (docs/decisions.md "Score integrity"). */
type Play = Schemas['PlayResponse'];

type State = 'flagged' | 'approved' | 'voided' | 'all';
type Verb = 'approve' | 'void' | 'restore';

/** Approve, void (a reason is asked) or restore a play, then `onChanged`. */
function useReview(onChanged: () => void) {
  const action = useAction();
  const [done, setDone] = useState<string | null>(null);
  const act = (play: Play, verb: Verb) =>
    action.run(async () => {
      let body: Schemas['VoidPlayDto'] = {};
      if (verb === 'void') {
        const reason = prompt(
          `Void play ${play.id} of ${play.username}? Its player's bests, ATP and ranks are recomputed without it. Reason (optional):`,
        );
        if (reason === null) return;
        body = reason.trim() === '' ? {} : { reason: reason.trim() };
      } else if (!confirm(`${verb === 'approve' ? 'Approve' : 'Restore'} play ${play.id} of ${play.username}?`)) {
        return;
      }
      const params = { path: { id: play.id } };
      const answer = await ok(
        verb === 'void'
          ? admin.POST('/admin/plays/{id}/void', { params, body })
          : verb === 'approve'
            ? admin.POST('/admin/plays/{id}/approve', { params })
            : admin.POST('/admin/plays/{id}/restore', { params }),
      );
      setDone(`Play ${answer.id}: ${answer.review}, ${answer.counts ? 'counts' : 'does not count'}`);
      onChanged();
    });
  return { action, done, act };
}

/** The buttons a play's standing offers, for a role that may review. */
function ReviewButtons({ play, review }: { play: Play; review: ReturnType<typeof useReview> }) {
  const can = useCan();
  if (!can('plays.review')) return null;
  const { action, act } = review;
  return (
    <>
      {play.review === 'flagged' && (
        <button type="button" class="secondary" disabled={action.busy} onClick={() => void act(play, 'approve')}>
          Approve
        </button>
      )}
      {play.review === 'voided' ? (
        <button type="button" class="secondary" disabled={action.busy} onClick={() => void act(play, 'restore')}>
          Restore
        </button>
      ) : (
        <button type="button" class="secondary" disabled={action.busy} onClick={() => void act(play, 'void')}>
          Void
        </button>
      )}
    </>
  );
}

/** The review queue: flagged plays by default; approve, void (with a reason) or restore each. */
export function PlaysPage() {
  const [state, setState] = useState<State>('flagged');
  const plays = usePagedList(
    (cursor) => ok(admin.GET('/admin/plays', { params: { query: { state, limit: 50, cursor } } })),
    [state],
  );
  const review = useReview(() => plays.reload());
  const { action, done } = review;
  return (
    <section>
      <h1>Plays</h1>
      <p class="muted">Plays that fail a consistency check are stored but count for nothing until approved.</p>
      <div class="row wrap">
        <Field label="Show">
          <select value={state} onChange={(event) => setState(event.currentTarget.value as State)}>
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
              <td>
                <a href={`#/plays/${play.id}`}>{play.id}</a>
              </td>
              <td>
                <a href={`#/players/${play.uid}`}>{play.username}</a> <span class="muted">#{play.uid}</span>
              </td>
              <td>{play.levelId}</td>
              <td>{play.pass ? play.acc : `${play.acc} (failed)`}</td>
              <td>
                <Time value={play.receivedAt} />
              </td>
              <td>{play.flags.join(', ') || '—'}</td>
              <td>{play.review === 'voided' && play.voidReason ? `voided: ${play.voidReason}` : play.review}</td>
              <td>{play.counts ? 'yes' : 'no'}</td>
              <td>
                <ReviewButtons play={play} review={review} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager {...plays.pager} />
    </section>
  );
}

/** One play: its judgement counts, combo and times, to decide on a flag. */
export function PlayPage({ id }: { id: string }) {
  const play = useLoad(() => ok(admin.GET('/admin/plays/{id}', { params: { path: { id: typedNumber(id) } } })), [id]);
  const review = useReview(() => play.reload());
  const p = play.data;
  return (
    <section>
      <p>
        <a href="#/plays">← Plays</a>
      </p>
      <ErrorBox error={play.error} />
      <ErrorBox error={review.action.error} />
      {review.done && <Notice>{review.done}</Notice>}
      <Loading loading={play.loading && !p} />
      {p && (
        <>
          <h1>
            Play {p.id} <span class="muted">({p.review})</span>
          </h1>
          <dl class="facts">
            <dt>Player</dt>
            <dd>
              <a href={`#/players/${p.uid}`}>{p.username}</a> <span class="muted">#{p.uid}</span>
            </dd>
            <dt>Level</dt>
            <dd>{p.levelId}</dd>
            <dt>Accuracy</dt>
            <dd>
              {p.acc} {p.pass ? '(passed)' : '(failed)'}
            </dd>
            <dt>Max combo</dt>
            <dd>
              {p.maxCombo}
              {p.fullCombo ? ' · full combo' : ''}
              {p.allPerfect ? ' · all perfect' : ''}
            </dd>
            <dt>Failed checks</dt>
            <dd class={p.flags.length > 0 ? 'warning' : undefined}>{p.flags.join(', ') || 'none'}</dd>
            <dt>Played (sent)</dt>
            <dd>
              <Time value={p.sentAt} />
            </dd>
            <dt>Received</dt>
            <dd>
              <Time value={p.receivedAt} />
            </dd>
            <dt>Server</dt>
            <dd>
              {p.serverName} <span class="muted">#{p.serverID}</span>
            </dd>
            <dt>Counts</dt>
            <dd>{p.counts ? 'yes' : 'no'}</dd>
            {p.voidReason && (
              <>
                <dt>Void reason</dt>
                <dd>{p.voidReason}</dd>
              </>
            )}
          </dl>
          <Table label="Judgements" head={['Notes', 'Perfect', 'Great', 'Miss']}>
            {(['tap', 'hold', 'dodge', 'look'] as const).map((group) => (
              <tr key={group}>
                <td>{group}</td>
                <td>{p.judgements[group].perfect}</td>
                <td>{p.judgements[group].great}</td>
                <td>{p.judgements[group].miss}</td>
              </tr>
            ))}
          </Table>
          <div class="row">
            <ReviewButtons play={p} review={review} />
          </div>
        </>
      )}
    </section>
  );
}
