import { describe, it, expect } from 'vitest';
import { geminiReportedError, geminiStatusError, parseErrorBody, type ErrorContext } from './errors.js';

const CTX: ErrorContext = { providerId: 'gemini-test', apiKey: 'AIza-secret-key' };

function body(error: Record<string, unknown>): string {
  return JSON.stringify({ error });
}

describe('parseErrorBody', () => {
  it('reads code, status, message, ErrorInfo reason and RetryInfo delay', () => {
    const text = body({
      code: 429,
      message: 'Quota exceeded',
      status: 'RESOURCE_EXHAUSTED',
      details: [
        { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] },
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMIT_EXCEEDED' },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37.5s' },
      ],
    });
    expect(parseErrorBody(text)).toEqual({ code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded', reason: 'RATE_LIMIT_EXCEEDED', retryDelaySeconds: 37.5 });
  });

  it('reads the array-wrapped form and survives anything else', () => {
    expect(parseErrorBody(`[${body({ code: 500, message: 'Internal', status: 'INTERNAL' })}]`).message).toBe('Internal');
    for (const text of ['', 'Bad Gateway', '{}', '{"error":"text"}', '[]', 'null']) expect(parseErrorBody(text).message).toBeUndefined();
  });
});

describe('geminiStatusError', () => {
  it('relays a 400 with Gemini message as upstream_rejected_request', () => {
    const err = geminiStatusError(CTX, 400, body({ code: 400, message: 'Invalid value at contents[0]', status: 'INVALID_ARGUMENT' }), undefined);
    expect(err.code).toBe('upstream_rejected_request');
    expect(err.status).toBe(400);
    expect(err.message).toContain('Invalid value at contents[0]');
  });

  it('treats a rejected key (a 400 at Gemini) as the gateway credential failing, not the caller', () => {
    const text = body({
      code: 400,
      message: `API key not valid. Please pass a valid API key. ${CTX.apiKey}`,
      status: 'INVALID_ARGUMENT',
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }],
    });
    const err = geminiStatusError(CTX, 400, text, undefined);
    expect(err.code).toBe('upstream_auth_failed');
    expect(err.status).toBe(502);
    expect(err.message).not.toContain(CTX.apiKey!);
    expect(geminiStatusError(CTX, 403, body({ code: 403, message: 'denied', status: 'PERMISSION_DENIED' }), undefined).code).toBe('upstream_auth_failed');
  });

  it('blames the account, not the request, for FAILED_PRECONDITION', () => {
    const err = geminiStatusError(CTX, 400, body({ code: 400, message: 'User location is not supported for the API use.', status: 'FAILED_PRECONDITION' }), undefined);
    expect(err.code).toBe('upstream_error');
    expect(err.status).toBe(502);
    expect(err.message).toContain('User location is not supported');
  });

  it('takes the wait from Retry-After, else from RetryInfo', () => {
    const text = body({ code: 429, message: 'Quota', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12s' }] });
    const fromHeader = geminiStatusError(CTX, 429, text, '3');
    expect(fromHeader.code).toBe('upstream_unavailable');
    expect(fromHeader.retryAfterSeconds).toBe(3);
    expect(geminiStatusError(CTX, 429, text, undefined).retryAfterSeconds).toBe(12);
    expect(geminiStatusError(CTX, 503, body({ code: 503, message: 'Overloaded', status: 'UNAVAILABLE' }), undefined).retryAfterSeconds).toBeUndefined();
  });

  it('maps by status alone when the body is unreadable', () => {
    expect(geminiStatusError(CTX, 500, '<html>', undefined).code).toBe('upstream_error');
    expect(geminiStatusError(CTX, 504, '', undefined).code).toBe('upstream_timeout');
    expect(geminiStatusError(CTX, 400, '', undefined).message).toContain('status 400');
  });

  it('scrubs the key from a relayed message', () => {
    const err = geminiStatusError(CTX, 400, body({ code: 400, message: `bad request from ${CTX.apiKey}`, status: 'INVALID_ARGUMENT' }), undefined);
    expect(err.message).toContain('[redacted]');
    expect(err.message).not.toContain(CTX.apiKey!);
  });
});

describe('geminiReportedError', () => {
  it('tells overload and quota apart from other failures', () => {
    const overloaded = geminiReportedError(CTX, parseErrorBody(body({ code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' })));
    expect(overloaded.code).toBe('upstream_unavailable');
    expect(overloaded.message).toContain('The model is overloaded.');
    const quota = geminiReportedError(CTX, parseErrorBody(body({ status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '4s' }] })));
    expect(quota.code).toBe('upstream_unavailable');
    expect(quota.retryAfterSeconds).toBe(4);
    const internal = geminiReportedError(CTX, parseErrorBody(body({ code: 500, message: 'Internal error', status: 'INTERNAL' })));
    expect(internal.code).toBe('upstream_error');
    expect(internal.message).toContain('Internal error');
    expect(geminiReportedError(CTX, parseErrorBody('{}')).message).toContain('unknown error');
  });
});
