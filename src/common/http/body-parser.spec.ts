import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bodyParserErrorHandler, jsonBodyParser } from './body-parser';
import { isCheckedJsonBody } from './json-body-check';

describe('jsonBodyParser', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const app = express();
    app.use(jsonBodyParser(), bodyParserErrorHandler);
    // Answers whether the body that reached the route is marked as checked.
    app.post('/', (req, res) => {
      res.json({ body: req.body as unknown, checked: isCheckedJsonBody(req.body) });
    });
    await new Promise<void>((resolve) => {
      server = app.listen(0, '127.0.0.1', () => resolve());
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const post = (body: string, type = 'application/json') =>
    fetch(url, { method: 'POST', headers: { 'content-type': type }, body });

  it('marks a JSON body that passed the body check, as parsed', async () => {
    const response = await post('{"a":{"b":[1,2]}}');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ body: { a: { b: [1, 2] } }, checked: true });
  });

  it('refuses a body the check fails before any route sees it', async () => {
    const response = await post('{"a":{"__proto__":{"x":1}}}');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 'BAD_REQUEST',
      message: 'The key "__proto__" in a is not accepted',
      errors: [],
    });
  });

  it('marks nothing that is not a parsed JSON object or array', async () => {
    const text = await post('plain', 'text/plain');
    expect(await text.json()).toEqual({ checked: false });
    const scalar = await post('"text"');
    expect(scalar.status).toBe(400);
  });
});
