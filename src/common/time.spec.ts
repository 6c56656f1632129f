import { formatLocalDateTime, parseLocalDateTime } from './time';

describe('local date-times', () => {
  it('round-trips a local date-time', () => {
    const date = parseLocalDateTime('2026-12-01T08:05:09');
    expect(date).not.toBeNull();
    expect(formatLocalDateTime(date as Date)).toBe('2026-12-01T08:05:09');
  });

  it.each([
    '2026-02-30T00:00:00',
    '2026-13-01T00:00:00',
    '2026-12-01 08:05:09',
    '2026-12-01T08:05',
    '2026-12-01T08:05:09Z',
    '2026-12-01T24:00:00',
    '',
  ])('refuses %j', (text) => {
    expect(parseLocalDateTime(text)).toBeNull();
  });
});
