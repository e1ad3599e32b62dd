/**
 * The most text one upstream stream event may take before its end arrives. An event is a chunk of
 * an answer, a few hundred bytes; even one carrying a base64 audio delta is far below this. An
 * upstream that sends a line without end would otherwise be buffered whole (hundreds of MB) and
 * rescanned on every read, slowing every other request of the process.
 */
export const MAX_STREAM_EVENT_CHARS = 8 * 1024 * 1024;
