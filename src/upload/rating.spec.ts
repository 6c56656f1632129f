import { atpOf, atpTenThousandths, playRating } from './rating';
import { roundRating, toTenThousandths } from '../ranking/rating-scale';

describe('playRating (decisions.md §5)', () => {
  const C = 10;

  it.each([
    // acc, expected rating on C = 10
    [100, 12],
    [99.99, 10 + 1 + 1.99 / 2], // 11.995
    [98, 11],
    [97.99, 10 + 2.99 / 3], // 10.99666…
    [95, 10],
    [94.99, 10 - 0.01 / 5], // 9.998
    [90, 9],
    [0, 0], // 10 − 19 is below 0
  ])('acc %d on C = 10 rates %d', (acc, expected) => {
    expect(playRating(C, acc)).toBeCloseTo(expected, 12);
  });

  it('is exact at the boundaries where the formula changes', () => {
    expect(playRating(C, 100)).toBe(12);
    expect(playRating(C, 98)).toBe(11);
    expect(playRating(C, 95)).toBe(10);
  });

  it('is continuous across each boundary and never decreases with acc', () => {
    for (const boundary of [95, 98, 100]) {
      expect(playRating(C, boundary) - playRating(C, boundary - 1e-9)).toBeLessThan(1e-6);
    }
    const decreases: number[] = [];
    for (let step = 1; step <= 10_000; step++) {
      if (playRating(C, step / 100) < playRating(C, (step - 1) / 100)) decreases.push(step / 100);
    }
    expect(decreases).toEqual([]);
  });

  it('gives a placeholder chart (C = 0) at most 2 and never below 0', () => {
    expect(playRating(0, 100)).toBe(2);
    expect(playRating(0, 99.99)).toBeCloseTo(1.995, 12);
    expect(playRating(0, 98)).toBe(1);
    expect(playRating(0, 97.99)).toBeCloseTo(2.99 / 3, 12);
    expect(playRating(0, 95)).toBe(0);
    expect(playRating(0, 94.99)).toBe(0);
    expect(playRating(0, 0)).toBe(0);
  });

  it('takes fractional constants as they are', () => {
    expect(playRating(12.7, 100)).toBeCloseTo(14.7, 12);
    expect(playRating(12.7, 96.5)).toBeCloseTo(13.2, 12);
  });
});

describe('rounding to 4 decimals', () => {
  it('rounds half up on the decimal reading, not on binary noise', () => {
    expect(toTenThousandths(1.00005)).toBe(10001);
    expect(toTenThousandths(1.00004999)).toBe(10000);
    expect(roundRating(11.994999999999997)).toBe(11.995);
    expect(roundRating(10 + 2.99 / 3)).toBe(10.9967);
    expect(roundRating(0)).toBe(0);
  });
});

describe('ATP', () => {
  it('is 0 without any counted chart', () => {
    expect(atpOf([])).toBe(0);
    expect(atpTenThousandths([])).toBe(0);
  });

  it('divides by 30 even with fewer than 30 charts', () => {
    expect(atpOf([12])).toBe(0.4);
    expect(atpOf([1])).toBe(0.0333); // 0.0333…
    expect(atpOf([2])).toBe(0.0667); // 0.0666… rounds up
    expect(atpOf([12, 11, 10])).toBe(1.1);
  });

  it('takes only the 30 highest ratings when there are more', () => {
    const thirty = Array.from({ length: 30 }, () => 10);
    expect(atpOf(thirty)).toBe(10);
    expect(atpOf([...thirty, 9, 5, 0])).toBe(10); // lower ones do not count
    expect(atpOf([...thirty, 40])).toBe(11); // a higher one replaces the lowest 10
    const ladder = Array.from({ length: 45 }, (_, i) => i + 1); // 1..45: top 30 are 16..45
    expect(atpOf(ladder)).toBe(30.5);
  });

  it('does not depend on the order of the ratings', () => {
    const ratings = [11.995, 10.99666, 9.998, 12, 0, 3.3333, 7.1];
    const shuffled = [7.1, 0, 12, 9.998, 3.3333, 11.995, 10.99666];
    expect(atpTenThousandths(ratings)).toBe(atpTenThousandths(shuffled));
    expect(atpOf(ratings)).toBe(1.8474); // 55.42096 / 30 = 1.847365…
  });

  it('is an integer count of ten-thousandths', () => {
    expect(atpTenThousandths([12, 11.995])).toBe(7998); // 23.995 / 30 = 0.79983…
    expect(Number.isInteger(atpTenThousandths([10 + 2.99 / 3, 9.998]))).toBe(true);
  });
});
