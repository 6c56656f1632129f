/** One column of a text table: its heading and how a row shows in it. */
export type Column<T> = [heading: string, cell: (row: T) => unknown];

/** C0 and C1 controls and DEL. */
// eslint-disable-next-line no-control-regex -- the control characters are what cellText takes out
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * A cell as text: '-' for null/undefined, JSON for objects, one line always, and no control
 * character reaches the terminal: tabs and line breaks become a space, every other C0 and C1
 * control (ESC starts the terminal's escape sequences) and DEL is shown as its `\u` escape, so a
 * chart, pack or player name cannot recolour or rewrite an operator's terminal.
 */
export function cellText(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
        ? String(value)
        : JSON.stringify(value);
  const oneLine = text.replace(/[\r\n\t]+/g, ' ');
  return oneLine.replace(CONTROL, (control) => `\\u${control.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Left-aligned columns separated by two spaces; numbers right-aligned. */
export function table<T>(rows: T[], columns: Column<T>[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((row) => columns.map(([, cell]) => cell(row)));
  const texts = cells.map((row) => row.map(cellText));
  const widths = columns.map(([heading], index) => Math.max(heading.length, ...texts.map((row) => row[index].length)));
  const line = (values: string[], raw?: unknown[]) =>
    values
      .map((value, index) =>
        typeof raw?.[index] === 'number' ? value.padStart(widths[index]) : value.padEnd(widths[index]),
      )
      .join('  ')
      .trimEnd();
  return [line(columns.map(([heading]) => heading)), ...texts.map((row, index) => line(row, cells[index]))].join('\n');
}

/** `key  value` lines for one object's fields. */
export function fields(entries: [string, unknown][]): string {
  const width = Math.max(...entries.map(([key]) => key.length));
  return entries.map(([key, value]) => `${key.padEnd(width)}  ${cellText(value)}`).join('\n');
}
