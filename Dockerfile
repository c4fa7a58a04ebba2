# syntax=docker/dockerfile:1
# Node 24 (an LTS release in support; Node 20 reached its end of life in April 2026).
# Sources stage: full dependencies and the sources both builds compile.
FROM node:24-bookworm-slim AS sources
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json tsconfig.dev.json ormconfig.ts ./
COPY src ./src

# Build stage: the production build only (tsconfig.build.json: src/ without src/devnet, no
# bench, no tests), then production dependencies only.
FROM sources AS build
RUN npm run build && npm prune --omit=dev

# The simulated subnet (docker compose --profile devnet): the development build of the devnet,
# a separate image target so that the default image holds no simulator.
FROM sources AS devnet-build
COPY bench ./bench
RUN npm run build:dev && npm prune --omit=dev

FROM node:24-bookworm-slim AS devnet
ENV NODE_ENV=production
WORKDIR /app
COPY --from=devnet-build --chown=node:node /app/node_modules ./node_modules
COPY --from=devnet-build --chown=node:node /app/dist-dev ./dist-dev
COPY --chown=node:node package.json ./
# /devnet: the devnet profile's volume (a new named volume takes this directory's owner).
RUN mkdir -p /devnet && chown node:node /devnet
USER node
CMD ["node", "dist-dev/src/devnet/cli.js"]

# Runtime stage (the default target, last): production dependencies and the production build
# only, as a non-root user.
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# git (and ssh for ssh:// remotes) publishes votes to the Gravity repository (GRAVITY_REPO_URL).
# tini: an init that reaps what node does not (README, "Shutdown").
RUN apt-get update \
  && apt-get install -y --no-install-recommends git openssh-client ca-certificates tini \
  && rm -rf /var/lib/apt/lists/*
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node package.json ./
COPY --chown=node:node config/default-desirabilities.json ./config/default-desirabilities.json
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "require('http').get('http://127.0.0.1:'+(process.env.PORT||3000)+'/openapi.json',r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1))"
# tini runs node and passes signals on to it. -s: it reaps orphans also when it is not PID 1
# itself (compose's `init: true` puts docker's own init there).
ENTRYPOINT ["/usr/bin/tini", "-s", "--"]
CMD ["node", "dist/src/main.js"]
