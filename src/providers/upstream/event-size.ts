/**
 * The most text one upstream stream event may take before its end arrives. An event is a chunk of
 * an answer, mostly a few hundred bytes; the largest are those that carry a whole image as base64
 * (some routers stream `delta.images`), which stay well below this even for a 4K picture. An
 * upstream that sends a line without end would otherwise be buffered whole (gigabytes) until the
 * generation budget ran out.
 */
export const MAX_STREAM_EVENT_CHARS = 32 * 1024 * 1024;
