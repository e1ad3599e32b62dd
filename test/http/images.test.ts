/**
 * POST /v1/images/generations and the assets it makes, black box: the official SDK against a
 * listening gateway, the mock provider's real PNGs, the OpenAI adapter against the local OpenAI
 * stand-in (b64_json and url answers), an Anthropic route (no images: 501), and the asset routes
 * with range requests and account scoping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { FAKE_OPENAI_KEY, startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.js';
import { TINY_PNG } from '../fakes/openai-images.js';
import { RawConnection } from '../support/raw-http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests reach into arbitrary response fields.
type Json = Record<string, any>;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const price = { per_image: 0.04 };
const imageModel = (id: string, routes: unknown[]) => ({ id, capabilities: ['image_generation'], context_window: 4096, price, routes });

let upstream: FakeOpenAI;
let gw: RunningGateway;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeOpenAI();
  gw = await startGateway({
    accounts: { acct: 'standard', other: 'standard', capped: 'capped' },
    keys: { main: { account: 'acct' }, other: { account: 'other' }, capped: { account: 'capped' } },
    config: {
      providers: [
        { id: 'mock', kind: 'mock' },
        { id: 'openai', kind: 'openai', base_url: upstream.url, api_key: FAKE_OPENAI_KEY },
        { id: 'claude', kind: 'anthropic', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-ant-unused' },
      ],
      models: [
        imageModel('mock-image', [{ provider: 'mock', model: 'mock-painter' }]),
        imageModel('gpt-image', [{ provider: 'openai', model: 'gpt-image-1' }]),
        imageModel('dall-e', [{ provider: 'openai', model: 'dall-e-3' }]),
        imageModel('claude-image', [{ provider: 'claude', model: 'claude-haiku' }]),
        { id: 'mock-chat', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'mock', model: 'mock-upstream' }] },
      ],
      tiers: {
        standard: { models: ['*'], endpoints: ['*'] },
        capped: { models: ['*'], endpoints: ['*'], limits: { daily: { images: 1 } } },
      },
    },
  });
  client = new OpenAI({ apiKey: gw.keys.main!, baseURL: gw.baseURL, maxRetries: 0 });
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

function get(path: string, key: string | null = gw.keys.main!, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(path.startsWith('http') ? path : `${gw.baseURL}${path}`, { headers: { ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...headers } });
}

function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE);
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe('POST /v1/images/generations', () => {
  it('returns real PNGs of the requested size as b64_json', async () => {
    const result = await client.images.generate({ model: 'mock-image', prompt: 'a red fox', size: '256x256', n: 2, response_format: 'b64_json' });
    expect(result.data).toHaveLength(2);
    for (const image of result.data!) expect(pngSize(Buffer.from(image.b64_json!, 'base64'))).toEqual({ width: 256, height: 256 });
  });

  it('links to an asset Tollgate serves by default, readable whole or by range by its own account only', async () => {
    const result = await client.images.generate({ model: 'mock-image', prompt: 'a lighthouse', size: '64x32' });
    const url = result.data![0]!.url!;
    expect(url).toMatch(new RegExp(`^${gw.url}/v1/assets/asset_[0-9a-f]{24}/content$`));

    const whole = await get(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('image/png');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const png = Buffer.from(await whole.arrayBuffer());
    expect(pngSize(png)).toEqual({ width: 64, height: 32 });
    expect(Number(whole.headers.get('content-length'))).toBe(png.length);

    const head = await get(url, gw.keys.main, { range: 'bytes=0-7' });
    expect(head.status).toBe(206);
    expect(head.headers.get('content-range')).toBe(`bytes 0-7/${png.length}`);
    expect(Buffer.from(await head.arrayBuffer())).toEqual(PNG_SIGNATURE);
    const tail = await get(url, gw.keys.main, { range: 'bytes=-4' });
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(png.subarray(png.length - 4));
    const past = await get(url, gw.keys.main, { range: `bytes=${png.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe(`bytes */${png.length}`);
    expect(((await past.json()) as Json).error).toMatchObject({ type: 'invalid_request_error', code: 'range_not_satisfiable' });

    const id = /asset_[0-9a-f]{24}/.exec(url)![0];
    const record = await get(`/assets/${id}`);
    expect((await record.json()) as Json).toMatchObject({ id, object: 'asset', content_type: 'image/png', bytes: png.length, url });

    // Another account's asset does not exist for this caller; no key at all is 401.
    for (const path of [`/assets/${id}`, `/assets/${id}/content`]) {
      const theirs = await get(path, gw.keys.other);
      expect(theirs.status).toBe(404);
      expect(((await theirs.json()) as Json).error).toMatchObject({ type: 'not_found_error', code: 'asset_not_found' });
    }
    expect((await get(url, null)).status).toBe(401);
  });

  it('answers 404 for an asset that does not exist or a malformed id', async () => {
    for (const id of ['asset_000000000000000000000000', 'not-an-asset', '..%2F..%2Fetc%2Fpasswd']) {
      const res = await get(`/assets/${id}/content`);
      expect(res.status).toBe(404);
      expect(((await res.json()) as Json).error.code).toBe('asset_not_found');
    }
  });

  it('charges per image at the model’s per_image price', async () => {
    const before = (await gw.gateway.store.getAccount('acct'))!.balanceMicros;
    await client.images.generate({ model: 'mock-image', prompt: 'three cats', n: 3, size: '16x16', response_format: 'b64_json' });
    const after = (await gw.gateway.store.getAccount('acct'))!.balanceMicros;
    expect(before - after).toBe(120_000);
  });

  it('takes an OpenAI upstream’s b64_json and its short-lived url alike, and serves both as its own assets', async () => {
    const fromB64 = await client.images.generate({ model: 'gpt-image', prompt: 'a boat', response_format: 'url' });
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/generations');
    expect(sent.body).toEqual({ model: 'gpt-image-1', prompt: 'a boat' });
    expect(Buffer.from(await (await get(fromB64.data![0]!.url!)).arrayBuffer())).toEqual(TINY_PNG);

    const fromUrl = await client.images.generate({ model: 'dall-e', prompt: 'a boat', response_format: 'b64_json' });
    expect(Buffer.from(fromUrl.data![0]!.b64_json!, 'base64')).toEqual(TINY_PNG);
    expect(fromUrl.data![0]!.revised_prompt).toBe('A picture of a boat');
  });

  it('edits a picture (images.edit), through the mock and an OpenAI upstream, charged per image', async () => {
    const before = (await gw.gateway.store.getAccount('acct'))!.balanceMicros;
    const edited = await client.images.edit({ model: 'mock-image', image: await toFile(TINY_PNG, 'in.png', { type: 'image/png' }), prompt: 'make it red', size: '16x16', n: 2, response_format: 'b64_json' });
    expect(edited.data).toHaveLength(2);
    expect(Buffer.from(edited.data![0]!.b64_json!, 'base64').subarray(0, 8)).toEqual(PNG_SIGNATURE);
    const charged = before - (await gw.gateway.store.getAccount('acct'))!.balanceMicros;
    expect(charged).toBe(80_000);

    const upstreamEdit = await client.images.edit({ model: 'gpt-image', image: await toFile(TINY_PNG, 'in.png', { type: 'image/png' }), mask: await toFile(TINY_PNG, 'mask.png', { type: 'image/png' }), prompt: 'a hat', quality: 'low' });
    expect(Buffer.from(upstreamEdit.data![0]!.b64_json!, 'base64')).toEqual(TINY_PNG);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/images/edits');
    const form = sent.body as { fields: Array<[string, string]>; files: Array<{ field: string }> };
    expect(form.fields).toEqual([['model', 'gpt-image-1'], ['prompt', 'a hat'], ['quality', 'low']]);
    expect(form.files.map((file) => file.field)).toEqual(['image', 'mask']);
  });

  it('refuses an edit without its picture or prompt, or with a field it does not take, naming the field', async () => {
    const send = (fields: Record<string, string>, withImage = true) => {
      const form = new FormData();
      for (const [name, value] of Object.entries(fields)) form.set(name, value);
      if (withImage) form.set('image', new Blob([TINY_PNG], { type: 'image/png' }), 'in.png');
      return fetch(`${gw.baseURL}/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}` }, body: form });
    };
    for (const [fields, withImage, param] of [
      [{ model: 'mock-image', prompt: 'x' }, false, 'image'],
      [{ model: 'mock-image' }, true, 'prompt'],
      [{ model: 'mock-image', prompt: 'x', style: 'vivid' }, true, 'style'],
      [{ model: 'mock-image', prompt: 'x', n: '11' }, true, 'n'],
    ] as const) {
      const res = await send(fields, withImage);
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).error.param).toBe(param);
    }
    const two = await client.images.edit({ model: 'mock-image', image: [await toFile(TINY_PNG, 'a.png', { type: 'image/png' }), await toFile(TINY_PNG, 'b.png', { type: 'image/png' })], prompt: 'x' }).catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(two).toMatchObject({ status: 400, param: 'image' });
    const unsupported = await client.images.edit({ model: 'claude-image', image: await toFile(TINY_PNG, 'in.png', { type: 'image/png' }), prompt: 'x' }).catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(unsupported).toMatchObject({ status: 501, code: 'capability_not_implemented' });
  });

  it('links to the address the request reached when it named no Host (HTTP/1.0)', async () => {
    const connection = await RawConnection.open(gw.url);
    try {
      const body = JSON.stringify({ model: 'mock-image', prompt: 'a dot', size: '16x16' });
      connection.write(`POST /v1/images/generations HTTP/1.0\r\nauthorization: Bearer ${gw.keys.main}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      const answer = await connection.response();
      expect(answer.status).toBe(200);
      const url = (JSON.parse(answer.body) as Json).data[0].url as string;
      expect(url).toBe(`${gw.url}/v1/assets/${/asset_[^/]+/.exec(url)![0]}/content`);
    } finally {
      connection.destroy();
    }
  });

  it('answers as OpenAI does by default: b64_json for a GPT image model, a url for the others', async () => {
    const gpt = await client.images.generate({ model: 'gpt-image', prompt: 'a boat' });
    expect(Buffer.from(gpt.data![0]!.b64_json!, 'base64')).toEqual(TINY_PNG);
    expect(gpt.data![0]!.url).toBeUndefined();
    const dalle = await client.images.generate({ model: 'dall-e', prompt: 'a boat' });
    expect(dalle.data![0]!.url).toMatch(/\/v1\/assets\/asset_/);
  });

  it.each([
    [{ model: 'mock-image' }, 'missing_required_parameter', 'prompt'],
    [{ model: 'mock-image', prompt: 'x', n: 11 }, 'invalid_parameter', 'n'],
    [{ model: 'mock-image', prompt: 'x', size: 'big' }, 'invalid_parameter', 'size'],
    [{ model: 'mock-image', prompt: 'x', response_format: 'jpeg' }, 'invalid_parameter', 'response_format'],
  ])('refuses %j with 400 %s naming %s', async (body, code, param) => {
    const res = await fetch(`${gw.baseURL}/images/generations`, { method: 'POST', headers: { authorization: `Bearer ${gw.keys.main}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error).toMatchObject({ code, param });
  });

  it('answers 422 for a model without image generation and 501 when no route’s adapter makes images', async () => {
    await expect(client.images.generate({ model: 'mock-chat', prompt: 'x' })).rejects.toMatchObject({ status: 422, code: 'model_capability_missing' });
    const err = await client.images.generate({ model: 'claude-image', prompt: 'x' }).catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
    expect(err).toMatchObject({ status: 501, code: 'capability_not_implemented' });
    expect((err as Error).message).toContain('image_generation');
  });

  it('refuses stream: true, naming it, rather than answering a stream reader with one JSON body', async () => {
    await expect(client.images.generate({ model: 'mock-image', prompt: 'x', stream: true, partial_images: 1 })).rejects.toMatchObject({ status: 400, code: 'invalid_parameter', param: 'stream' });
  });

  it('has a daily cap of its own', async () => {
    const capped = new OpenAI({ apiKey: gw.keys.capped!, baseURL: gw.baseURL, maxRetries: 0 });
    await capped.images.generate({ model: 'mock-image', prompt: 'one', size: '16x16' });
    await expect(capped.images.generate({ model: 'mock-image', prompt: 'two', size: '16x16' })).rejects.toMatchObject({ status: 429, code: 'daily_cap_exceeded' });
  });

  it('replays the same asset links to a resend with the same Idempotency-Key', async () => {
    const headers = { 'Idempotency-Key': `img-${Date.now()}` };
    const first = await client.images.generate({ model: 'mock-image', prompt: 'a kite', size: '16x16' }, { headers });
    const second = await client.images.generate({ model: 'mock-image', prompt: 'a kite', size: '16x16' }, { headers });
    expect(second.data![0]!.url).toBe(first.data![0]!.url);
  });
});
