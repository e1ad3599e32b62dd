import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenLocal } from '../../../test/support/local-server.js';
import { Cancellation } from '../../util/cancellation.js';
import { imagesResult } from './images.js';

let origin: string;
let close: () => Promise<void>;

beforeAll(async () => {
  // An image host that serves a picture, and a page where a picture was promised.
  const server = createServer((req, res) => {
    if (req.url === '/page') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<script>alert(1)</script>');
      return;
    }
    res.writeHead(200, { 'content-type': 'image/png' });
    res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  });
  const local = await listenLocal(server);
  origin = local.origin;
  close = () => local.close();
});
afterAll(() => close());

const answer = (url: string) => JSON.stringify({ created: 1, data: [{ url }] });

describe('imagesResult: images the upstream gives by URL', () => {
  it('downloads an image, keeping its type', async () => {
    const [image] = await imagesResult('oai', undefined, answer(`${origin}/a.png`), new Cancellation().signal);
    expect(image?.contentType).toBe('image/png');
    expect(image?.data).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  });

  it.each([
    ['a page where an image was promised', () => `${origin}/page`, 'not an image'],
    ['a URL of another scheme', () => 'file:///etc/passwd', 'not http(s)'],
    ['a data URL', () => 'data:text/html,<b>x</b>', 'not http(s)'],
  ])('refuses %s as a malformed answer', async (_name, url, detail) => {
    await expect(imagesResult('oai', undefined, answer(url()), new Cancellation().signal)).rejects.toMatchObject({ code: 'upstream_malformed_response', message: expect.stringContaining(detail) });
  });
});
