import { render } from 'preact';
import { App } from './app';
import './style.css';

/** The network's name (SITE_NAME) from site.json beside this page; a default when it cannot be read. */
async function siteName(): Promise<string> {
  try {
    const response = await fetch('./site.json', { headers: { Accept: 'application/json' } });
    const body = (await response.json()) as { name?: unknown };
    return typeof body.name === 'string' && body.name !== '' ? body.name : 'Leaderboards';
  } catch {
    return 'Leaderboards';
  }
}

void siteName().then((name) => render(<App name={name} />, document.getElementById('app') as HTMLElement));
