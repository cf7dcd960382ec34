// Small fetch helpers for the bridge's thread and signal routes (the page's copy of what
// `mastra-agui-bridge/client` offers as BridgeClient: the page has no build step).

/** An error answer: `{ error, code, details? }` with its HTTP status. */
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export class Api {
  /** @param {string} base the bridge prefix, e.g. `/agui` */
  constructor(base) {
    this.base = base;
  }

  async request(method, path, { query, body } = {}) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined && value !== '') params.set(key, String(value));
    const qs = params.toString();
    const init = { method, headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(`${this.base}${path}${qs ? `?${qs}` : ''}`, init);
    const text = await response.text();
    let data;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = text;
    }
    if (!response.ok) {
      const message = data && typeof data === 'object' && typeof data.error === 'string' ? data.error : String(text || response.statusText);
      const code = data && typeof data === 'object' && typeof data.code === 'string' ? data.code : `HTTP_${response.status}`;
      throw new ApiError(response.status, code, message, data && data.details);
    }
    return data;
  }

  thread(threadId) {
    return `/threads/${encodeURIComponent(threadId)}`;
  }

  listThreads(resourceId) {
    return this.request('GET', '/threads', { query: { resourceId, limit: 50 } });
  }

  createThread(resourceId, title) {
    return this.request('POST', '/threads', { body: { resourceId, title } });
  }

  sendMessage(threadId, resourceId, message) {
    return this.request('POST', `${this.thread(threadId)}/send-message`, { body: { resourceId, message } });
  }

  queueMessage(threadId, resourceId, message) {
    return this.request('POST', `${this.thread(threadId)}/queue-message`, { body: { resourceId, message } });
  }

  notify(threadId, resourceId, notification) {
    return this.request('POST', `${this.thread(threadId)}/notifications`, { body: { resourceId, ...notification } });
  }

  state(threadId, resourceId, state) {
    return this.request('POST', `${this.thread(threadId)}/state`, { body: { resourceId, ...state } });
  }

  pendingApprovals(threadId, resourceId) {
    return this.request('GET', `${this.thread(threadId)}/pending-approvals`, { query: { resourceId } });
  }

  toolApproval(threadId, resourceId, toolCallId, approved, reason) {
    return this.request('POST', `${this.thread(threadId)}/tool-approval`, { body: { resourceId, toolCallId, approved, ...(reason && { reason }) } });
  }

  abort(threadId, resourceId) {
    return this.request('POST', `${this.thread(threadId)}/abort`, { body: { resourceId } });
  }

  eventsUrl(threadId, query) {
    const params = new URLSearchParams(query);
    return `${this.base}${this.thread(threadId)}/events?${params}`;
  }
}
