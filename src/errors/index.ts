export { ERROR_CODES, type ErrorCode } from './catalogue.js';
export { STATUS_TABLE, type ErrorStatus, type ErrorType } from './status-table.js';
export { GatewayError, type GatewayErrorOptions } from './gateway-error.js';
export { toGatewayError, toEnvelope, envelopeJson, errorHeaders, type ErrorEnvelope } from './envelope.js';
export { LONGEST_CLIENT_WAIT_SECONDS, retryableAfter } from './client-wait.js';
export { keepProviderSecrets, scrubSecrets } from './secrets.js';
