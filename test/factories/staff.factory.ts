import { randomBytes } from 'node:crypto';
import type { Role } from '../../src/auth/permissions';
import { HttpClient } from '../support/http';
import type { TestClients } from '../support/test-app';

export interface TestStaff {
  id: number;
  name: string;
  role: Role;
  password: string;
}

export interface TestStaffSession {
  staff: TestStaff;
  /** Sends the session cookie and X-CSRF-Token, as the console does. */
  client: HttpClient;
  /** The session cookie's value (the secret). */
  secret: string;
  csrfToken: string;
  /** The device cookie the sign-in set (null when the browser already had one). */
  device: string | null;
  body: Record<string, unknown>;
}

/** A name of the staff name rule, unique per call. */
export function staffName(prefix = 'staff'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** A password of the policy (15 characters or more), unique per call. */
export function staffPassword(): string {
  return `pw ${randomBytes(12).toString('base64url')}`;
}

/** Adds a staff account through the admin API with ADMIN_TOKEN. */
export async function createStaff(app: TestClients, role: Role, name = staffName(role)): Promise<TestStaff> {
  const password = staffPassword();
  const response = await app.admin.post('/admin/staff', { name, role, password });
  if (response.status !== 201) throw new Error(`createStaff: ${response.status} ${response.text}`);
  return { id: response.body.id as number, name, role, password };
}

/** The cookies of a Set-Cookie list, by name (value only). */
export function setCookies(headers: Headers): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const line of headers.getSetCookie()) {
    const [pair] = line.split(';');
    const separator = pair.indexOf('=');
    cookies[pair.slice(0, separator)] = pair.slice(separator + 1);
  }
  return cookies;
}

/** Signs in as the console does (name and password), returning a client that carries the session. */
export async function signIn(
  app: TestClients,
  staff: TestStaff,
  options: { device?: string; headers?: Record<string, string> } = {},
): Promise<TestStaffSession> {
  const response = await app.http.post(
    '/admin/session',
    { name: staff.name, password: staff.password },
    { headers: { ...(options.device ? { Cookie: `rhythmc_device=${options.device}` } : {}), ...options.headers } },
  );
  if (response.status !== 200) throw new Error(`signIn: ${response.status} ${response.text}`);
  const cookies = setCookies(response.headers);
  const secret = cookies.rhythmc_session;
  const csrfToken = cookies.rhythmc_csrf;
  return {
    staff,
    secret,
    csrfToken,
    device: cookies.rhythmc_device ?? null,
    body: response.body as Record<string, unknown>,
    client: new HttpClient(app.http.baseUrl, null, {
      Cookie: `rhythmc_session=${secret}; rhythmc_csrf=${csrfToken}`,
      'X-CSRF-Token': csrfToken,
    }),
  };
}

/** Creates a personal API token from a console session. */
export async function createToken(
  session: TestStaffSession,
  body: { name: string; role?: Role } = { name: 'script' },
): Promise<{ id: number; token: string }> {
  const response = await session.client.post('/admin/me/tokens', body);
  if (response.status !== 201) throw new Error(`createToken: ${response.status} ${response.text}`);
  return { id: response.body.id as number, token: response.body.token as string };
}
