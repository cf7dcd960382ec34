import type { Route } from '../route.js';
import { getAgent, listAgents } from './agents.js';
import { openApiRoute } from './meta.js';
import { threadEvents } from './events.js';
import { postToolResult, runAgent } from './runs.js';
import {
  abortThread,
  cancelQueued,
  listNotifications,
  pendingApprovals,
  queueMessage,
  sendMessage,
  sendNotification,
  sendSignal,
  sendState,
  toolApproval,
} from './signals.js';
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  runSchedule,
  scheduleTriggers,
  threadSchedules,
  updateSchedule,
} from './schedules.js';
import { createThread, deleteThread, getState, getThread, listMessages, listThreads, updateThread } from './threads.js';

/** Every route of the bridge, in one table (paths are relative to the configured prefix); the OpenAPI document lists them in this order. */
export const ROUTES: readonly Route[] = [
  runAgent,
  postToolResult,
  listAgents,
  getAgent,
  createThread,
  listThreads,
  getThread,
  updateThread,
  deleteThread,
  listMessages,
  getState,
  threadEvents,
  sendMessage,
  queueMessage,
  sendSignal,
  sendState,
  sendNotification,
  listNotifications,
  toolApproval,
  pendingApprovals,
  abortThread,
  cancelQueued,
  createSchedule,
  threadSchedules,
  listSchedules,
  getSchedule,
  updateSchedule,
  pauseSchedule,
  resumeSchedule,
  runSchedule,
  scheduleTriggers,
  deleteSchedule,
  openApiRoute(() => ROUTES),
];
