/**
 * What requests cost, from the model's price table (config `models[].price`, in credits).
 * Balances and charges are integers in micro-credits (millionths), so that money is exact: a
 * price per million tokens in credits is exactly a price per token in micro-credits. A charge is
 * rounded up to the next micro-credit, once per request.
 */
import type { PriceConfig } from '../config/schema.js';
import type { Modality } from '../protocol/modalities.js';

export const MICROS_PER_CREDIT = 1_000_000;

/** Float noise (0.15 × 1000 = 150.00000000000003) must not round a charge up by a whole micro-credit. */
function micros(exact: number): number {
  return Math.max(0, Math.ceil(exact - 1e-6));
}

export function tokenCostMicros(price: PriceConfig, promptTokens: number, completionTokens: number): number {
  return micros(promptTokens * price.input_per_million_tokens + completionTokens * price.output_per_million_tokens);
}

/** The price of one unit of a modality counted in units (an image, a second of audio or video), in micro-credits. */
export function unitPriceMicros(price: PriceConfig, modality: Modality): number {
  const credits = modality === 'images' ? price.per_image : modality === 'audio' ? price.per_audio_second : modality === 'video' ? price.per_video_second : undefined;
  return (credits ?? 0) * MICROS_PER_CREDIT;
}

/** Tokens at the token prices plus units at the modality's unit price, rounded up once. */
export function costMicros(price: PriceConfig, modality: Modality, promptTokens: number, completionTokens: number, units: number): number {
  return micros(promptTokens * price.input_per_million_tokens + completionTokens * price.output_per_million_tokens + units * unitPriceMicros(price, modality));
}

/** Credits as an operator reads them: up to six decimals, no trailing zeros. */
export function formatCredits(amountMicros: number): string {
  return (amountMicros / MICROS_PER_CREDIT).toFixed(6).replace(/\.?0+$/, '');
}
