import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenLocal } from '../../../test/support/local-server.js';
import { TINY_PNG } from '../../../test/fakes/openai-images.js';
import { Cancellation } from '../../util/cancellation.js';
import { imagesResult } from './images.js';

let origin: string;
let close: () => Promise<void>;

beforeAll(async () => {
  // An image host: a PNG under its own type, a PNG as S3-style storage serves it, a page and an
  // SVG where a picture was promised.
  const server = createServer((req, res) => {
    const answers: Record<string, [string, string | Buffer]> = {
      '/a.png': ['image/png', TINY_PNG],
      '/stored': ['binary/octet-stream', TINY_PNG],
      '/page': ['text/html', '<script>alert(1)</script>'],
      '/drawing.svg': ['image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'],
    };
    const [type, body] = answers[req.url ?? ''] ?? ['text/plain', 'nothing here'];
    res.writeHead(200, { 'content-type': type });
    res.end(body);
  });
  const local = await listenLocal(server);
  origin = local.origin;
  close = () => local.close();
});
afterAll(() => close());

const answer = (url: string) => JSON.stringify({ created: 1, data: [{ url }] });

describe('imagesResult: images the upstream gives by URL', () => {
  it.each([
    ['served as a PNG', () => `${origin}/a.png`],
    ['served as octet-stream, as object storage does', () => `${origin}/stored`],
    ['inline, as a data: URL', () => `data:image/png;base64,${TINY_PNG.toString('base64')}`],
  ])('keeps a picture %s, under the type its bytes show', async (_name, url) => {
    const signal = new Cancellation();
    const [image] = await imagesResult('oai', undefined, answer(url()), signal);
    expect(image?.contentType).toBe('image/png');
    expect(image?.data).toEqual(TINY_PNG);
    expect(signal.listenerCount('abort')).toBe(0);
  });

  it.each([
    ['a page where an image was promised', () => `${origin}/page`, 'not a PNG, JPEG, GIF or WebP'],
    ['an SVG, which may hold scripts', () => `${origin}/drawing.svg`, 'not a PNG, JPEG, GIF or WebP'],
    ['a URL of another scheme', () => 'file:///etc/passwd', 'neither http(s) nor a data: image'],
    ['a data: URL that is not an image', () => 'data:text/html,<b>x</b>', 'neither http(s) nor a data: image'],
  ])('refuses %s as a malformed answer, leaving no listener behind', async (_name, url, detail) => {
    const signal = new Cancellation();
    await expect(imagesResult('oai', undefined, answer(url()), signal)).rejects.toMatchObject({ code: 'upstream_malformed_response', message: expect.stringContaining(detail) });
    expect(signal.listenerCount('abort')).toBe(0);
  });
});

describe('imagesResult: images the upstream gives inline (b64_json)', () => {
  it('keeps them under the type their bytes show, whatever output_format the answer names', async () => {
    const body = JSON.stringify({ created: 1, output_format: 'svg+xml; charset=utf-8', data: [{ b64_json: TINY_PNG.toString('base64') }] });
    const [image] = await imagesResult('oai', undefined, body, new Cancellation());
    expect(image?.contentType).toBe('image/png');
  });

  it('refuses bytes that are no picture as a malformed upstream answer', async () => {
    const body = JSON.stringify({ created: 1, data: [{ b64_json: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64') }] });
    await expect(imagesResult('oai', undefined, body, new Cancellation())).rejects.toMatchObject({ code: 'upstream_malformed_response' });
  });
});
