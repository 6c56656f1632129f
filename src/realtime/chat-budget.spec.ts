import { ChatBudget } from './chat-budget';

describe('ChatBudget', () => {
  it('allows the burst at once, then the rate', () => {
    const budget = new ChatBudget(2, 3, 0);
    expect([budget.take(0), budget.take(0), budget.take(0)]).toEqual([0, 0, 0]);
    expect(budget.take(0)).toBe(500);
    expect(budget.take(400)).toBe(100);
    expect(budget.take(500)).toBe(0);
    expect(budget.take(500)).toBe(500);
    expect(budget.take(1_000)).toBe(0);
  });

  it('refills up to the burst only', () => {
    const budget = new ChatBudget(10, 2, 0);
    expect(budget.take(0)).toBe(0);
    expect(budget.isFull(50)).toBe(false);
    expect(budget.isFull(100)).toBe(true);
    const results = [budget.take(60_000), budget.take(60_000), budget.take(60_000)];
    expect(results).toEqual([0, 0, 100]);
  });
});
