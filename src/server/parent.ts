/**
 * Calls `onGone` once the process that started this one has exited. On Linux and macOS an orphan is
 * re-parented (to init or a subreaper), so `process.ppid` changes; on Windows it does not, and this
 * never fires. Polled by an unref'd timer (one `getppid()` per tick, well under a microsecond), so
 * it never keeps the process alive. Returns a function that stops watching.
 *
 * @param parent the parent's pid as read at start-up (read it early: a parent that dies while the
 *   server is still starting is then noticed on the first tick)
 */
export function watchParent(onGone: () => void, parent: number = process.ppid, intervalMs = 500): () => void {
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * True when an npm command started this process (`npm start`, `npm run`, `npx`/`npm exec`): npm
 * sets `npm_lifecycle_event` for what it runs. Such a server should not outlive npm.
 */
export function startedByNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.npm_lifecycle_event !== undefined;
}
