// Preloaded (node --import) into a vlc child by the hostile-input tests: at exit, writes the
// process's peak resident memory in KiB to the file named by VLC_TEST_RSS_FILE.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  if (process.env.VLC_TEST_RSS_FILE) writeFileSync(process.env.VLC_TEST_RSS_FILE, String(process.resourceUsage().maxRSS));
});
