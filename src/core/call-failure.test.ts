import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import { failedSettlement } from './call-failure.js';

describe('failedSettlement', () => {
  it.each(['incompatible_parameters', 'context_length_exceeded', 'capability_not_implemented', 'upstream_rejected_request', 'upstream_unavailable'] as const)(
    'gives the reserved tokens back after %s: nothing was generated',
    (code) => {
      expect(failedSettlement(new GatewayError(code))).toEqual({ tokens: 0, failed: true });
    },
  );

  it.each(['generation_timeout', 'upstream_timeout', 'internal_error'] as const)('keeps the reservation after %s: the upstream may have worked', (code) => {
    expect(failedSettlement(new GatewayError(code))).toEqual({ tokens: null, failed: true });
  });

  it('keeps the reservation after a fault that is not a GatewayError', () => {
    expect(failedSettlement(new Error('boom'))).toEqual({ tokens: null, failed: true });
  });
});
