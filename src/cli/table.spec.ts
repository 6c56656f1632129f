import { cellText, fields, table } from './table';

describe('cellText (the CLI tables)', () => {
  it('keeps one line and shows control characters as escapes, never sending them to the terminal', () => {
    expect(cellText('a\r\nb\tc')).toBe('a b c');
    expect(cellText('\u001b[31mred\u001b[0m')).toBe('\\u001b[31mred\\u001b[0m');
    expect(cellText('bell\u0007 del\u007f csi\u009b nul\u0000')).toBe('bell\\u0007 del\\u007f csi\\u009b nul\\u0000');
    expect(cellText('Über §a ok')).toBe('Über §a ok');
    expect(cellText(null)).toBe('-');
    expect(cellText({ name: '\u001b' })).toBe('{"name":"\\u001b"}');
  });

  it('escapes in tables and field lists too', () => {
    expect(table([{ name: 'x\u001b]0;owned\u0007' }], [['name', (row) => row.name]])).toBe(
      'name\nx\\u001b]0;owned\\u0007',
    );
    expect(fields([['name', '\u001bc']])).toBe('name  \\u001bc');
  });
});
