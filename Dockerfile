# The backfill worker (and CLI) image used by docker-compose.yml.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY examples ./examples
RUN npm ci --no-audit --no-fund && npm prune --omit=dev
ENV NODE_ENV=production
ENTRYPOINT ["node", "dist/client.js"]
CMD ["worker"]
