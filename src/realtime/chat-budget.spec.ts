import { ChatBudget } from './chat-budget';

describe('ChatBudget', () => {
  it('allows the burst at once, then the rate', () => {
    const budget = new ChatBudget(2, 3, 0);
    expect([budget.take(0), budget.take(0), budget.take(0), budget.take(0)]).toEqual([true, true, true, false]);
    expect(budget.secondsUntilNext()).toBe(1);
    expect(budget.take(400)).toBe(false);
    expect(budget.take(500)).toBe(true);
    expect(budget.take(500)).toBe(false);
    expect(budget.take(1_000)).toBe(true);
  });

  it('refills up to the burst only', () => {
    const budget = new ChatBudget(10, 2, 0);
    expect(budget.take(0)).toBe(true);
    const results = [budget.take(60_000), budget.take(60_000), budget.take(60_000)];
    expect(results).toEqual([true, true, false]);
  });
});
