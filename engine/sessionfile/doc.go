// Package sessionfile stores a session as the original's version-3 JSONL
// file (agent-core.md §5.1–5.3): a header line, then one line per entry.
//
// A Store is the engine.Store of a persisted session. It writes nothing
// until the first assistant message (a session that never got an answer
// leaves no file); then it writes the header and every entry so far to a
// temporary file, syncs it and moves it into place, so the file appears
// whole or not at all, and never in place of an existing file. Every later entry is one line added with a single
// write(2) on a file opened O_APPEND. That write reaches the kernel before
// Append returns, so a crash of the process costs at most the line being
// written, and Load skips a torn last line with a warning. Appends are
// not fsynced one by one: an fsync costs milliseconds on the engine's
// executor for every entry, and what it adds (surviving a kernel crash or
// a power cut) is given by Sync and Close, which the caller runs when a
// session is switched or the process exits. Creation, renames and header
// rewrites are always synced.
//
// Every file this package reads is opened under engine/safefile's rule:
// a FIFO, a device, a directory, a socket or one of the agent's own
// standard streams is refused without being opened for reading (so
// switch_session or --continue never blocks on a FIFO or reads /dev/zero),
// and no read is unbounded: a first line is a header only within 1 MiB
// (listing and --continue stop there), and Load skips a line over
// MaxLineBytes (128 MiB) with a warning, reading through it without
// holding it. Latest reports each newer file it passes over.
//
// Load is lenient as the original is: a line that does not decode is
// skipped and reported in Session.Warnings, never fatal; only a missing
// file or a first line that is not a session header fails (ErrNotSession).
// A line written with spaces between its tokens (Python's json.dumps) is
// compacted before decoding, so it takes the fast decoder too.
// Reading is linear, line by line with a bufio.Reader (lines can be many
// MiB), the lines decoded in chunks on all CPUs, each chunk by one
// engine.EntryDecoder (message entries, nearly every line, in one pass);
// the chunks' line buffers are recycled, so a load allocates little more
// than the entries it returns (74 MB for 100k entries whose structs take
// 69 MiB, about 0.1-0.2 s on 2 cores). Appending costs the same
// at the hundred-thousandth entry as at the first: nothing is re-read or
// rewritten. Listing reads only the head of each file.
//
// Files are created 0600 and directories 0700: sessions hold source code,
// command output and sometimes secrets.
//
// Version 1 files (no entry ids) and version 2 files (the hookMessage
// role) are not migrated: they load as they are, with a warning, and
// entries appended to them are version 3 lines under the old header (the
// original migrates such a file when it next loads it). A v2 hookMessage
// decodes as a custom message, so its context is right; a v1 file has no
// ids, so its entries load without a tree.
//
// Images are written inline; the original's blob store (images of 1024
// characters or more moved to <agentDir>/blobs) is not implemented.
package sessionfile
