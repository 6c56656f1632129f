import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { lowerRole, PERMISSION_NAMES, PERMISSIONS, permissionsOf, roleAllows, ROLES } from './permissions';

/** The role table of docs/operations.md, as PERMISSIONS says it. */
function roleTable(): string {
  const lines = [
    `| permission | what | ${ROLES.join(' | ')} |`,
    `|---|---|${ROLES.map(() => ':-:').join('|')}|`,
    ...PERMISSION_NAMES.map(
      (permission) =>
        `| \`${permission}\` | ${PERMISSIONS[permission].what} | ${ROLES.map((role) => (roleAllows(role, permission) ? '✓' : '')).join(' | ')} |`,
    ),
  ];
  return lines.join('\n');
}

describe('staff roles', () => {
  it('are a ladder: each role holds every permission of the roles below it', () => {
    for (let i = 1; i < ROLES.length; i++) {
      const below = permissionsOf(ROLES[i - 1]);
      const above = permissionsOf(ROLES[i]);
      expect(above).toEqual(expect.arrayContaining(below));
      expect(above.length).toBeGreaterThan(below.length);
    }
    expect(permissionsOf('owner')).toEqual(PERMISSION_NAMES);
    expect(permissionsOf('read-only')).toEqual([
      'account.self',
      'overview.read',
      'players.read',
      'servers.read',
      'catalog.read',
      'boards.read',
      'plays.read',
    ]);
    expect(
      permissionsOf('read-only').some((permission) => !permission.endsWith('.read') && permission !== 'account.self'),
    ).toBe(false);
  });

  it('give a token the lower of its role and its account role', () => {
    expect(lowerRole('owner', 'moderator')).toBe('moderator');
    expect(lowerRole('support', 'admin')).toBe('support');
  });

  it('are the table of docs/operations.md', () => {
    const operations = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
    expect(operations).toContain(roleTable());
  });
});
