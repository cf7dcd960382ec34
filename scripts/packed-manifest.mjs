// `npm pack` (and `npm publish`) packs package.json as it is on disk, and npm 11 lists a package's
// `prepare` among the install scripts a user must approve, though npm never runs it for a registry
// package. So `prepack` builds and takes `prepare` (which builds dist/ on `npm install` in this
// checkout) out of the file the tarball gets; `postpack` puts the file back byte for byte, with
// its modification time: a package.json newer than dist/ would make the next `npm start` rebuild.
//
//   node scripts/packed-manifest.mjs strip | restore
import { existsSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';

const MANIFEST = 'package.json';
const SAVED = '.package.json.unpacked';

const step = process.argv[2];
if (step === 'strip') {
  const text = readFileSync(MANIFEST, 'utf8');
  const { atime, mtime } = statSync(MANIFEST);
  writeFileSync(SAVED, text);
  // The saved copy carries the original's times, which a rename keeps.
  utimesSync(SAVED, atime, mtime);
  const manifest = JSON.parse(text);
  delete manifest.scripts.prepare;
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
} else if (step === 'restore') {
  if (existsSync(SAVED)) renameSync(SAVED, MANIFEST);
} else {
  process.stderr.write('usage: node scripts/packed-manifest.mjs strip | restore\n');
  process.exit(2);
}
