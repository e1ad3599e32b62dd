/** The OpenAI image-generation wire types (POST /v1/images/generations). */

export interface ImagesRequest {
  model: string;
  prompt: string;
  /** Images to make, 1 to 10 (default 1). */
  n?: number;
  /** `WIDTHxHEIGHT` or `auto`. */
  size?: string;
  /** `url` (default): a link to an asset Tollgate serves; `b64_json`: the PNG in the response. */
  response_format?: 'url' | 'b64_json';
  quality?: string;
  style?: string;
  user?: string;
  [extra: string]: unknown;
}

export interface ImageObject {
  url?: string;
  b64_json?: string;
  revised_prompt?: string;
}

export interface ImagesResponse {
  created: number;
  data: ImageObject[];
}

export const MAX_IMAGES_PER_REQUEST = 10;
