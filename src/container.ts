import 'reflect-metadata';
import type { Mastra } from '@mastra/core';
import { Container } from 'inversify';
import { AgentProvider } from './agents/agent-provider.js';
import { ResultCapture } from './runs/result-capture.js';
import { RunAnnouncements } from './runs/run-announcements.js';
import { RunService } from './runs/run-service.js';
import type { ResolvedConfig } from './config.js';
import { ResourceResolver } from './http/resource-resolver.js';
import type { Services } from './http/services.js';
import { SignalRouter } from './signals/signal-router.js';
import { ThreadHub } from './feed/thread-hub.js';
import { ThreadStore } from './threads/thread-store.js';
import { TOKENS } from './tokens.js';
import { ToolProxy } from './runs/tool-proxy.js';
import { StreamTranslator } from './translate/stream-translator.js';

/**
 * Wires the bridge for one Mastra instance: every binding in one place, every service a singleton.
 * The container stays private; handlers get the resolved `Services`.
 */
export function createServices(config: ResolvedConfig, mastra: Mastra): Services {
  const container = new Container({ defaultScope: 'Singleton' });
  container.bind(TOKENS.Config).toConstantValue(config);
  container.bind(TOKENS.Mastra).toConstantValue(mastra);
  container.bind(TOKENS.Logger).toConstantValue(config.logger);
  container.bind(TOKENS.AgentProvider).to(AgentProvider);
  container.bind(TOKENS.TranslatorFactory).to(StreamTranslator);
  container.bind(TOKENS.ThreadStore).to(ThreadStore);
  container.bind(TOKENS.ToolProxy).to(ToolProxy);
  container.bind(TOKENS.ResultCapture).to(ResultCapture);
  container.bind(TOKENS.ResourceResolver).to(ResourceResolver);
  container.bind(TOKENS.RunAnnouncements).to(RunAnnouncements);
  container.bind(TOKENS.RunService).to(RunService);
  container.bind(TOKENS.SignalRouter).to(SignalRouter);
  container.bind(TOKENS.ThreadHub).to(ThreadHub);
  return {
    config,
    agents: container.get<AgentProvider>(TOKENS.AgentProvider),
    runs: container.get<RunService>(TOKENS.RunService),
    threads: container.get<ThreadStore>(TOKENS.ThreadStore),
    proxy: container.get<ToolProxy>(TOKENS.ToolProxy),
    resources: container.get<ResourceResolver>(TOKENS.ResourceResolver),
    signals: container.get<SignalRouter>(TOKENS.SignalRouter),
    hub: container.get<ThreadHub>(TOKENS.ThreadHub),
  };
}
