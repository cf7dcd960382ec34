# The standalone server as an image: the package packed from this checkout, then installed as a
# user installs it, with the optional peers for LibSQL, PostgreSQL, Redis and traces, run by the `node`
# user. docs/deployment.md ("In a container") says how to run it, and how to build an image of
# your own Mastra app instead.
#
#   docker build -t mastra-agui-bridge .
#   docker run --rm -p 4111:4111 -v bridge-data:/data mastra-agui-bridge

FROM node:22-bookworm-slim AS pack
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund && npm pack

FROM node:22-bookworm-slim
WORKDIR /app
COPY --from=pack /src/mastra-agui-bridge-*.tgz /tmp/
RUN echo '{"private":true}' > package.json \
  && npm install --omit=dev --no-audit --no-fund /tmp/mastra-agui-bridge-*.tgz \
    @mastra/core@1.71.0 @mastra/memory@1.31.0 @mastra/libsql@1.23.1 @mastra/pg@1.27.1 pg@8.23.1 redis@6.3.1 \
    @opentelemetry/sdk-node@0.218.0 @mastra/observability@1.17.4 @mastra/otel-bridge@1.5.4 \
  && rm /tmp/*.tgz \
  && mkdir /data && chown node:node /data
USER node
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4111 DATABASE_URL=file:/data/bridge.db
VOLUME /data
EXPOSE 4111
HEALTHCHECK --interval=10s --timeout=3s CMD ["node", "-e", "fetch('http://127.0.0.1:4111/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The server handles SIGTERM itself (a drain, then a clean exit), also as PID 1.
STOPSIGNAL SIGTERM
CMD ["node", "node_modules/mastra-agui-bridge/bin/mastra-agui-bridge.js"]
