import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/JSON export carries it, attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  /** The instrumentation scope that made it. */
  scope: string;
  /** `service.name` of its resource. */
  service: string;
  status?: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** The value for `OTEL_EXPORTER_OTLP_ENDPOINT` (traces go to `<url>/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** Bodies of `application/x-protobuf` exports, kept whole. */
  protobuf: Buffer[];
  /** Resolves once `match` holds for the spans received. */
  waitFor(match: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

type JsonValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type JsonAttribute = { key: string; value: JsonValue };
type JsonExport = {
  resourceSpans?: Array<{
    resource?: { attributes?: JsonAttribute[] };
    scopeSpans?: Array<{
      scope?: { name?: string };
      spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: JsonAttribute[]; status?: ReceivedSpan['status'] }>;
    }>;
  }>;
};

const flatten = (attributes: JsonAttribute[] = []) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue]));

/** An OTLP/HTTP trace receiver on a free loopback port: JSON exports parsed, protobuf ones kept. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const protobuf: Buffer[] = [];
  const waiters = new Set<() => void>();
  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (String(req.headers['content-type']).includes('json')) {
      const exported = JSON.parse(body.toString('utf8')) as JsonExport;
      for (const { resource, scopeSpans = [] } of exported.resourceSpans ?? []) {
        const service = String(flatten(resource?.attributes)['service.name']);
        for (const { scope, spans: list = [] } of scopeSpans) {
          for (const span of list) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId && { parentSpanId: span.parentSpanId }),
              name: span.name,
              attributes: flatten(span.attributes),
              scope: scope?.name ?? '',
              service,
              status: span.status,
            });
          }
        }
      }
    } else {
      protobuf.push(body);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    for (const wake of waiters) wake();
  };
  const server = createServer((req, res) => void onRequest(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    protobuf,
    waitFor(match) {
      return new Promise((resolve) => {
        const check = () => {
          if (!match(spans)) return;
          waiters.delete(check);
          resolve(spans);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
