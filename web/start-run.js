// @ts-check
import { BridgeRequestError } from './client.js';
import { app, authHeaders, baseUrl, openThreadId } from './page.js';

/**
 * Starts a run of the picked workflow (`POST /run`). Resolves to its run id once the bridge
 * accepted it; the run itself reaches the page on the thread's stream, as every run does. Its own
 * stream is read to the end, not dropped: a client that leaves cancels its run.
 *
 * @param {{ messages: import('@ag-ui/core').Message[], resume?: import('@ag-ui/core').ResumeEntry[] }} run
 * @returns {Promise<string>} the run's id
 */
export async function startRun({ messages, resume }) {
  const input = {
    threadId: openThreadId(),
    runId: crypto.randomUUID(),
    messages,
    tools: [],
    context: [],
    state: {},
    forwardedProps: { agentId: app.target?.id, resourceId: app.resourceId },
    ...(resume && { resume }),
  };
  const response = await fetch(`${baseUrl}/run`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', ...authHeaders() },
    body: JSON.stringify(input),
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new BridgeRequestError({
      status: response.status,
      code: body.code ?? `HTTP_${response.status}`,
      message: body.error ?? response.statusText,
      details: body.details,
      request: 'POST /run',
    });
  }
  void response.text().catch(() => {
    // The page left, or the connection dropped: the thread's stream says how the run ended.
  });
  return input.runId;
}
