/**
 * The staff commands of the admin CLI (issue 42): accounts (owners only), and the caller's own
 * personal API tokens. A password is never a flag (shell history, `ps`): it is typed at a prompt
 * that does not echo it, or read from the first line of stdin when stdin is not a terminal.
 */
import { readSync } from 'node:fs';
import { isatty } from 'node:tty';
import type { Schemas } from '../admin-client/client';
import { call, Command, Parsed, readCommand, text, UsageError } from './admin-command';
import { Column, fields, table } from './table';

const ROLES = 'read-only, support, moderator, admin or owner';

const ACCOUNT_COLUMNS: Column<Schemas['StaffAccountResponse']>[] = [
  ['id', (row) => row.id],
  ['name', (row) => row.name],
  ['role', (row) => row.role],
  ['disabled', (row) => row.disabled],
  ['2fa', (row) => row.secondFactor],
  ['tokens', (row) => row.tokens],
  ['lastSignIn', (row) => row.lastSignInAt],
  ['created', (row) => row.createdAt],
];
const TOKEN_COLUMNS: Column<Schemas['StaffTokenResponse']>[] = [
  ['id', (row) => row.id],
  ['name', (row) => row.name],
  ['role', (row) => row.role],
  ['lastUsed', (row) => row.lastUsedAt],
  ['created', (row) => row.createdAt],
];

/**
 * A password: at a terminal, typed without echo (Enter ends it, Ctrl-C gives up); otherwise the
 * first line of stdin (`printf '%s\n' "$PASSWORD" | npm run --silent admin -- …`).
 */
export function readPassword(prompt: string, command: Command): string {
  let password = '';
  if (isatty(0)) {
    process.stderr.write(prompt);
    process.stdin.setRawMode(true);
    try {
      const byte = Buffer.alloc(1);
      for (;;) {
        if (readSync(0, byte, 0, 1, null) === 0) break;
        const code = byte[0];
        if (code === 0x0d || code === 0x0a) break;
        if (code === 0x03) throw new UsageError('cancelled', command);
        if (code === 0x7f || code === 0x08) password = [...password].slice(0, -1).join('');
        else password += byte.toString('latin1');
      }
    } finally {
      process.stdin.setRawMode(false);
      process.stderr.write('\n');
    }
    password = Buffer.from(password, 'latin1').toString('utf8');
  } else {
    const chunks: Buffer[] = [];
    const buffer = Buffer.alloc(4096);
    for (;;) {
      let read: number;
      try {
        read = readSync(0, buffer, 0, buffer.length, null);
      } catch (error) {
        if ((error as { code?: string }).code === 'EAGAIN') continue;
        if ((error as { code?: string }).code === 'EOF') break;
        throw error;
      }
      if (read === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, read)));
      if (buffer.subarray(0, read).includes(0x0a)) break;
    }
    password = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0];
  }
  if (password.length === 0)
    throw new UsageError('no password given (type it at the prompt, or pipe it on stdin)', command);
  return password;
}

function accountCommand(
  name: string,
  summary: string,
  details: string,
  /** The fields of UpdateStaffDto (the document's), their values as typed: the service checks them (400). */
  body: (parsed: Parsed, command: Command) => { [Field in keyof Schemas['UpdateStaffDto']]?: unknown },
  args: string[] = ['<id>'],
): Command {
  const command: Command = {
    name,
    args,
    options: {},
    summary,
    details,
    // The id as typed (the service checks it and answers 400).
    build: (parsed) => ({
      ...call('PATCH', '/admin/staff/{id}', { id: parsed.positionals[0] }),
      body: JSON.stringify(body(parsed, command)),
    }),
  };
  return command;
}

export const STAFF_COMMANDS: Command[] = [
  readCommand('/admin/staff', {
    name: 'staff list',
    args: [],
    options: {
      limit: { type: 'string', value: '<n>', help: 'entries per page, 1-200 (default 50)' },
      cursor: { type: 'string', value: '<cursor>', help: 'the next page (printed under the previous one)' },
    },
    summary: 'staff accounts (owners only)',
    details: 'Answers {"items", "nextCursor"}.',
    build: ({ values }) => {
      const search = new URLSearchParams();
      for (const name of ['limit', 'cursor']) {
        const value = text(values, name);
        if (value !== undefined) search.set(name, value);
      }
      const query = search.toString();
      return call('GET', '/admin/staff', {}, query ? `?${query}` : '');
    },
    render: ({ items, nextCursor }) =>
      `${table(items, ACCOUNT_COLUMNS)}${nextCursor ? `\n\nmore: add --cursor ${nextCursor}` : ''}`,
  }),
  readCommand('/admin/staff/{id}', {
    name: 'staff show',
    args: ['<id>'],
    options: {},
    summary: 'one staff account with its tokens and sessions (owners only)',
    details: '',
    build: ({ positionals: [staffId] }) => call('GET', '/admin/staff/{id}', { id: staffId }),
    render: (account) =>
      [
        fields(ACCOUNT_COLUMNS.map(([heading, cell]) => [heading, cell(account)])),
        '',
        'Tokens',
        table(account.tokenList, TOKEN_COLUMNS),
        '',
        'Sessions',
        table(account.sessions, [
          ['id', (row) => row.id],
          ['signedIn', (row) => row.createdAt],
          ['lastSeen', (row) => row.lastSeenAt],
          ['from', (row) => row.sourceAddress],
        ]),
      ].join('\n'),
  }),
  (() => {
    const command: Command = {
      name: 'staff create',
      args: [],
      options: {
        name: { type: 'string', value: '<name>', help: '2-32 of a-z 0-9 . _ -', required: true },
        role: { type: 'string', value: '<role>', help: ROLES, required: true },
      },
      summary: 'add a staff account; its first password is asked for (never a flag)',
      details:
        'POST /admin/staff. The password (15 to 256 characters) is typed at a prompt that does not echo it, or\n' +
        'read from the first line of stdin. Tell it to the person, who changes it after signing in.\n' +
        'With ADMIN_TOKEN, not a personal token (STAFF_TOKEN): a new account would outlive its revocation.',
      build: ({ values }) => ({
        ...call('POST', '/admin/staff'),
        body: JSON.stringify({
          name: text(values, 'name'),
          role: text(values, 'role'),
          password: readPassword('Password for the new account: ', command),
        }),
      }),
    };
    return command;
  })(),
  accountCommand(
    'staff role',
    'change the role of a staff account (from its next request on)',
    `PATCH /admin/staff/{id}. <role>: ${ROLES}.`,
    ({ positionals: [, role] }) => ({ role }),
    ['<id>', '<role>'],
  ),
  accountCommand(
    'staff disable',
    'disable a staff account: its sessions end and its tokens are revoked at once',
    'PATCH /admin/staff/{id} {"disabled": true}.',
    () => ({ disabled: true }),
  ),
  accountCommand(
    'staff enable',
    'let a disabled staff account sign in again',
    'PATCH /admin/staff/{id} {"disabled": false}.',
    () => ({ disabled: false }),
  ),
  accountCommand(
    'staff password',
    "reset a staff account's password (asked for, never a flag); its sessions end",
    'PATCH /admin/staff/{id} {"password"}. Typed at a prompt that does not echo it, or the first line of stdin.\n' +
      "With ADMIN_TOKEN, not a personal token; not your own account (the console's My account).",
    (_, command) => ({ password: readPassword('New password: ', command) }),
  ),
  accountCommand(
    'staff second-factor-off',
    "turn off a staff account's second factor (a lost authenticator); the person turns it on again from the console",
    'PATCH /admin/staff/{id} {"secondFactor": false}. With ADMIN_TOKEN, not a personal token; not your own account.',
    () => ({ secondFactor: false }),
  ),
  {
    name: 'staff delete',
    args: ['<id>'],
    options: {},
    summary: 'delete a staff account with its sessions and tokens (its audit entries stay)',
    details: 'DELETE /admin/staff/{id}. Answers the deleted account.',
    build: ({ positionals: [staffId] }) => call('DELETE', '/admin/staff/{id}', { id: staffId }),
  },
  {
    name: 'staff revoke-token',
    args: ['<id>', '<tokenId>'],
    options: {},
    summary: "revoke a staff member's personal API token",
    details: 'DELETE /admin/staff/{id}/tokens/{tokenId}.',
    build: ({ positionals: [staffId, tokenId] }) =>
      call('DELETE', '/admin/staff/{id}/tokens/{tokenId}', { id: staffId, tokenId }),
  },
  readCommand('/admin/me', {
    name: 'me show',
    args: [],
    options: {},
    summary: 'who the token in the environment is, its role and permissions',
    details: '',
    build: () => call('GET', '/admin/me'),
    render: (me) =>
      fields([
        ['name', me.name],
        ['role', me.role],
        ['credential', me.credential],
        ['permissions', me.permissions.join(' ')],
        ['timeZone', me.timeZone],
      ]),
  }),
  readCommand('/admin/me/tokens', {
    name: 'tokens list',
    args: [],
    options: {},
    summary: 'your personal API tokens (STAFF_TOKEN) with their last use',
    details: 'Tokens are created in the console (My account): the token is shown once there.',
    build: () => call('GET', '/admin/me/tokens'),
    render: ({ items }) => table(items, TOKEN_COLUMNS),
  }),
  {
    name: 'tokens revoke',
    args: ['<id>'],
    options: {},
    summary: 'revoke one of your personal API tokens (it may be the one in use)',
    details: 'DELETE /admin/me/tokens/{id}.',
    build: ({ positionals: [tokenId] }) => call('DELETE', '/admin/me/tokens/{id}', { id: tokenId }),
  },
];
