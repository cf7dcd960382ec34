/** Injection tokens: one per service, so the container (and only the container) decides what is bound. */
export const TOKENS = {
  Config: Symbol.for('mastra-agui-bridge.Config'),
  Mastra: Symbol.for('mastra-agui-bridge.Mastra'),
  Logger: Symbol.for('mastra-agui-bridge.Logger'),
  AgentProvider: Symbol.for('mastra-agui-bridge.AgentProvider'),
  RunService: Symbol.for('mastra-agui-bridge.RunService'),
  RunAnnouncements: Symbol.for('mastra-agui-bridge.RunAnnouncements'),
  TranslatorFactory: Symbol.for('mastra-agui-bridge.TranslatorFactory'),
  MessageConverter: Symbol.for('mastra-agui-bridge.MessageConverter'),
  ThreadStore: Symbol.for('mastra-agui-bridge.ThreadStore'),
  ToolProxy: Symbol.for('mastra-agui-bridge.ToolProxy'),
  ResultCapture: Symbol.for('mastra-agui-bridge.ResultCapture'),
  ResourceResolver: Symbol.for('mastra-agui-bridge.ResourceResolver'),
  SignalRouter: Symbol.for('mastra-agui-bridge.SignalRouter'),
  ThreadHub: Symbol.for('mastra-agui-bridge.ThreadHub'),
} as const;
