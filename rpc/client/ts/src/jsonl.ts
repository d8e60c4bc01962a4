// Line framing of the RPC stream: one JSON value per LF-terminated line.

import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/** serializeJsonLine is one frame as the agent reads it: compact JSON and an LF. */
export function serializeJsonLine(value: unknown): string {
	return `${JSON.stringify(value)}\n`;
}

/**
 * readJsonLines calls onLine for every line of stream, split on LF only (a trailing CR is
 * dropped). Node's readline is not used because it also splits on U+2028 and U+2029, which are
 * valid inside JSON strings. Chunks are decoded as UTF-8 with a StringDecoder, so a character
 * split across two chunks arrives whole. Returns a function that stops reading.
 */
export function readJsonLines(stream: Readable, onLine: (line: string) => void): () => void {
	const decoder = new StringDecoder("utf8");
	let buffer = "";
	const emit = (line: string) => onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
	const onData = (chunk: string | Buffer) => {
		buffer += typeof chunk === "string" ? chunk : decoder.write(chunk);
		let start = 0;
		for (;;) {
			const nl = buffer.indexOf("\n", start);
			if (nl === -1) break;
			emit(buffer.slice(start, nl));
			start = nl + 1;
		}
		// One slice per chunk, not per line: a chunk of many small frames stays linear.
		buffer = buffer.slice(start);
	};
	const onEnd = () => {
		buffer += decoder.end();
		if (buffer.length > 0) emit(buffer);
		buffer = "";
	};
	stream.on("data", onData);
	stream.on("end", onEnd);
	return () => {
		stream.off("data", onData);
		stream.off("end", onEnd);
	};
}
