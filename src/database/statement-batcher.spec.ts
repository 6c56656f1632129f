import { QueryFailedError } from 'typeorm';
import type { PreparedQueries } from './prepared-queries';
import { BATCHES_IN_FLIGHT, BatchableStatement, compareUids, StatementBatcher } from './statement-batcher';

interface Sent {
  name: string;
  params: unknown[];
  finish: (rows: unknown[]) => void;
  fail: (error: unknown) => void;
}

/** A PreparedQueries that records what is sent and answers when the test says so. */
function fakePrepared(): { prepared: PreparedQueries; sent: Sent[] } {
  const sent: Sent[] = [];
  const prepared = {
    run: (name: string, _text: string, params: unknown[]) =>
      new Promise((resolve, reject) => sent.push({ name, params, finish: resolve, fail: reject })),
  } as unknown as PreparedQueries;
  return { prepared, sent };
}

const echo: BatchableStatement<{ uid: string }, { uid: string }> = {
  name: 'echo',
  single: 'SELECT $1 AS uid',
  params: (call) => [call.uid],
  batch: 'SELECT i, uid FROM unnest($1::text[]) WITH ORDINALITY AS a(uid, i)',
  order: (a, b) => compareUids(a.uid, b.uid),
};

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sqlError = (code: string) =>
  new QueryFailedError('SELECT', [], Object.assign(new Error(`sqlstate ${code}`), { code }));

describe('StatementBatcher', () => {
  it('sends a call alone as the single statement', async () => {
    const { prepared, sent } = fakePrepared();
    const answer = new StatementBatcher(prepared).run(echo, { uid: '7' });
    await turn();
    expect(sent.map(({ name, params }) => ({ name, params }))).toEqual([{ name: 'echo', params: ['7'] }]);
    sent[0].finish([{ uid: '7' }]);
    await expect(answer).resolves.toEqual({ uid: '7' });
  });

  it('sends the calls of one turn as one batch in lock order and answers each its own row', async () => {
    const { prepared, sent } = fakePrepared();
    const batcher = new StatementBatcher(prepared);
    const answers = ['30', '4', '100'].map((uid) => batcher.run(echo, { uid }));
    await turn();
    expect(sent.map(({ name, params }) => ({ name, params }))).toEqual([
      { name: 'echo_batch', params: [['4', '30', '100']] },
    ]);
    // Rows in any order: each goes to the call at its position.
    sent[0].finish([
      { i: '3', uid: '100' },
      { i: '1', uid: '4' },
      { i: '2', uid: '30' },
    ]);
    expect(await Promise.all(answers)).toEqual([{ uid: '30' }, { uid: '4' }, { uid: '100' }]);
    expect(batcher.stats()).toEqual({ batchedCalls: 3, fallbacks: 0 });
  });

  it(`keeps ${BATCHES_IN_FLIGHT} batches in flight and sends what arrived meanwhile together`, async () => {
    const { prepared, sent } = fakePrepared();
    const batcher = new StatementBatcher(prepared);
    const first = batcher.run(echo, { uid: '1' });
    await turn();
    const second = batcher.run(echo, { uid: '2' });
    await turn();
    const waiting = ['3', '4', '5'].map((uid) => batcher.run(echo, { uid }));
    await turn();
    expect(sent.map((s) => s.params)).toEqual([['1'], ['2']]);

    sent[0].finish([{ uid: '1' }]);
    await first;
    // The finished batch frees its turn; the waiting calls go at the next turn of the loop.
    await turn();
    await turn();
    expect(sent.map((s) => s.params)).toEqual([['1'], ['2'], [['3', '4', '5']]]);
    sent[1].finish([{ uid: '2' }]);
    sent[2].finish([1, 2, 3].map((i) => ({ i, uid: String(i + 2) })));
    expect(await Promise.all([second, ...waiting])).toEqual(['2', '3', '4', '5'].map((uid) => ({ uid })));
  });

  it("runs every call of a batch alone after the batch's database error, each getting its own answer", async () => {
    const { prepared, sent } = fakePrepared();
    const batcher = new StatementBatcher(prepared);
    const answers = ['1', '2'].map((uid) => batcher.run(echo, { uid }).catch((error: Error) => error.message));
    await turn();
    sent[0].fail(sqlError('40P01'));
    await turn();
    expect(sent.map(({ name, params }) => ({ name, params }))).toEqual([
      { name: 'echo_batch', params: [['1', '2']] },
      { name: 'echo', params: ['1'] },
      { name: 'echo', params: ['2'] },
    ]);
    sent[1].finish([{ uid: '1' }]);
    sent[2].fail(sqlError('23503'));
    expect(await Promise.all(answers)).toEqual([{ uid: '1' }, 'sqlstate 23503']);
    expect(batcher.stats()).toEqual({ batchedCalls: 0, fallbacks: 1 });
  });

  it('runs a call alone once more when PostgreSQL cancelled it to break a deadlock, and gives a second one to its caller', async () => {
    const { prepared, sent } = fakePrepared();
    const batcher = new StatementBatcher(prepared);
    const answers = ['1', '2'].map((uid) => batcher.run(echo, { uid }).catch((error: Error) => error.message));
    await turn();
    sent[0].fail(sqlError('40P01')); // the batch
    await turn();
    sent[1].fail(sqlError('40P01')); // call 1 alone: once more
    sent[2].fail(sqlError('40P01')); // call 2 alone: once more
    await turn();
    expect(sent.map(({ name, params }) => ({ name, params }))).toEqual([
      { name: 'echo_batch', params: [['1', '2']] },
      { name: 'echo', params: ['1'] },
      { name: 'echo', params: ['2'] },
      { name: 'echo', params: ['1'] },
      { name: 'echo', params: ['2'] },
    ]);
    sent[3].finish([{ uid: '1' }]);
    sent[4].fail(sqlError('40P01')); // a second deadlock of the same call: the caller's (a 503)
    expect(await Promise.all(answers)).toEqual([{ uid: '1' }, 'sqlstate 40P01']);
    await turn();
    expect(sent).toHaveLength(5);
  });

  it('does not run a call again for any other error of its own', async () => {
    const { prepared, sent } = fakePrepared();
    const answer = new StatementBatcher(prepared).run(echo, { uid: '7' }).catch((error: Error) => error.message);
    await turn();
    sent[0].fail(sqlError('55P03'));
    expect(await answer).toBe('sqlstate 55P03');
    await turn();
    expect(sent).toHaveLength(1);
  });

  it.each([
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['a connection refused by the server', sqlError('57P01')],
    ['too many connections', sqlError('53300')],
  ])('fails every call of the batch with %s, without running them again', async (_label, error) => {
    const { prepared, sent } = fakePrepared();
    const batcher = new StatementBatcher(prepared);
    const answers = ['1', '2'].map((uid) => batcher.run(echo, { uid }).catch((e: unknown) => e));
    await turn();
    sent[0].fail(error);
    expect(await Promise.all(answers)).toEqual([error, error]);
    await turn();
    expect(sent).toHaveLength(1);
  });

  it('fails a call the batch did not answer', async () => {
    const { prepared, sent } = fakePrepared();
    const batcher = new StatementBatcher(prepared);
    const answers = ['1', '2'].map((uid) => batcher.run(echo, { uid }).catch((error: Error) => error.message));
    await turn();
    sent[0].finish([{ i: 1, uid: '1' }]);
    expect(await Promise.all(answers)).toEqual([{ uid: '1' }, 'echo: no answer for a call of a batch']);
  });

  it('fails the calls of a batch whose parameters cannot be built, and goes on with the next ones', async () => {
    const { prepared, sent } = fakePrepared();
    const batcher = new StatementBatcher(prepared);
    const broken: BatchableStatement<{ uid: string }, { uid: string }> = {
      ...echo,
      params: (call) => {
        if (call.uid === 'bad') throw new Error('no parameters');
        return [call.uid];
      },
    };
    const failed = ['bad', '2'].map((uid) => batcher.run(broken, { uid }).catch((error: Error) => error.message));
    expect(await Promise.all(failed)).toEqual(['no parameters', 'no parameters']);
    const alone = batcher.run(broken, { uid: '3' });
    await turn();
    sent[0].finish([{ uid: '3' }]);
    await expect(alone).resolves.toEqual({ uid: '3' });
  });

  it('sends a parameter that is an array as its JSON text in a batch, as the array itself alone', async () => {
    const { prepared, sent } = fakePrepared();
    const batcher = new StatementBatcher(prepared);
    const keyed: BatchableStatement<{ uid: string; keys: string[] }, { uid: string }> = {
      ...echo,
      params: (call) => [call.uid, call.keys, 'constant'],
    };
    void batcher.run(keyed, { uid: '1', keys: ['a"b', 'c,d'] });
    void batcher.run(keyed, { uid: '2', keys: [] });
    await turn();
    void batcher.run(keyed, { uid: '3', keys: ['e'] });
    await turn();
    expect(sent.map((s) => s.params)).toEqual([
      [
        ['1', '2'],
        ['["a\\"b","c,d"]', '[]'],
        ['constant', 'constant'],
      ],
      ['3', ['e'], 'constant'],
    ]);
  });

  it('orders uids as numbers', () => {
    expect(['10', '9', '100', '11'].sort(compareUids)).toEqual(['9', '10', '11', '100']);
  });
});
