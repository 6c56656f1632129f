import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { ApiError, type Me } from './api';

/** Who is signed in: what the pages show and offer follows from it (the API refuses the rest anyway). */
export const SessionContext = createContext<Me | null>(null);

/** Whether the signed-in role holds a permission (src/auth/permissions.ts). */
export function useCan(): (permission: Me['permissions'][number]) => boolean {
  const me = useContext(SessionContext);
  return (permission) => me?.permissions.includes(permission) ?? false;
}

/** The service's time zone: every time the API answers is a local date-time in it. */
let serviceTimeZone = 'UTC';
export function setServiceTimeZone(zone: string): void {
  serviceTimeZone = zone;
}

/** `2026-03-20T18:04:11` → `2026-03-20 18:04:11 UTC` (the service's zone); null → —. */
export function formatTime(value: string | null | undefined): string {
  if (value === null || value === undefined || value === '') return '—';
  return `${value.replace('T', ' ')} ${serviceTimeZone}`;
}

export function Time({ value }: { value: string | null | undefined }) {
  return <span class="nowrap">{formatTime(value)}</span>;
}

/** A rating or ATP as the game shows it: 4 decimals, the precision of the upload's answer. */
export function rating(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toFixed(4);
}

/** An error as the API worded it. */
export function ErrorBox({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const text =
    error instanceof ApiError ? error.toString() : error instanceof Error ? error.message : JSON.stringify(error);
  return (
    <p class="error" role="alert">
      {text}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

export interface Loaded<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and on reload(); the latest answer or error. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!current) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (reason: unknown) => {
        if (!current) return;
        setData(null);
        setError(reason);
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { data, error, loading, reload };
}

/** Runs an action, remembering its error; `busy` while it runs. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run: (action: () => Promise<void>) => Promise<void>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

/** A secret shown once (a bootstrap token, a Net Token), with a copy button. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied');
    } catch {
      setCopied('Copying is not allowed here: select the text and copy it');
    }
  };
  return (
    <div class="secret" role="dialog" aria-label={label}>
      <p>
        <strong>{label}</strong> — shown only now; it is not stored in readable form.
      </p>
      <input
        class="secret-value"
        readOnly
        value={value}
        aria-label={label}
        onFocus={(event) => event.currentTarget.select()}
      />
      <div class="row">
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
        {copied && <span class="muted">{copied}</span>}
      </div>
    </div>
  );
}

export function Loading({ loading }: { loading: boolean }) {
  return loading ? <p class="muted">Loading…</p> : null;
}

export function Field({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <label class="field">
      <span>{label}</span>
      {children}
    </label>
  );
}

/** A table that scrolls sideways on a narrow screen. */
export function Table({ head, children, label }: { head: string[]; children: ComponentChildren; label: string }) {
  return (
    <div class="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>
            {head.map((name) => (
              <th key={name}>{name}</th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** One page of a cursor-paged admin list (`{items, nextCursor}`, the generated `…Page` types). */
interface CursorPage {
  nextCursor: string | null;
}

/** The buttons of a paged list (usePagedList's `pager`). */
export interface PagerControls {
  cursor: string | null;
  atFirst: boolean;
  onFirst: () => void;
  onNext: () => void;
}

/**
 * A cursor-paged admin list: `load(cursor)` for the first page (cursor undefined) and each next
 * one; back to the first page whenever `deps` (the filters) change. `null` from load: nothing to
 * list yet (a search not made). Render `<Pager {...list.pager} />` under the table.
 */
export function usePagedList<P extends CursorPage>(
  load: (cursor: string | undefined) => Promise<P | null>,
  deps: unknown[],
): Loaded<P> & { pager: PagerControls } {
  const key = JSON.stringify(deps);
  // The cursors that led to this page (the last one loads it), for the filters `key`: other filters start over.
  const [trail, setTrail] = useState<{ key: string; cursors: string[] }>({ key, cursors: [] });
  const cursors = trail.key === key ? trail.cursors : [];
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => load(cursor), [key, cursor]);
  const nextCursor = page.data?.nextCursor ?? null;
  return {
    ...page,
    pager: {
      cursor: nextCursor,
      atFirst: cursors.length === 0,
      onFirst: () => setTrail({ key, cursors: [] }),
      onNext: () => nextCursor !== null && setTrail({ key, cursors: [...cursors, nextCursor] }),
    },
  };
}

export function Pager({ cursor, onNext, onFirst, atFirst }: PagerControls) {
  return (
    <div class="row pager">
      <button type="button" class="secondary" disabled={atFirst} onClick={onFirst}>
        First page
      </button>
      <button type="button" class="secondary" disabled={cursor === null} onClick={onNext}>
        Next page
      </button>
    </div>
  );
}

export const json = (value: unknown): string => JSON.stringify(value);
