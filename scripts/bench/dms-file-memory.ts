// The memory of parsing one DMS XML file, in a process of its own (the bench's process holds the whole service and
// everything its other scenarios left, so its size says little about the parser): reads the file given, parses it as
// the worker does (readDmsFile), and prints one JSON line: the documents, the parse's time, the resident memory
// before it, and the process's peak resident memory (the kernel's high-water mark, process.resourceUsage().maxRSS).
// Started by dms.ts.
import { readFileSync } from 'node:fs';
import { readDmsFile } from '../../server/modules/dms/xml/read.js';

const bytes = readFileSync(process.argv[2]!);
const before = process.memoryUsage().rss;
const started = performance.now();
const documents = readDmsFile(bytes);
const ms = performance.now() - started;
console.log(
  JSON.stringify({
    documents: documents.length,
    ms,
    rssBeforeMb: before / 1048576,
    rssPeakMb: process.resourceUsage().maxRSS / 1024,
  }),
);
